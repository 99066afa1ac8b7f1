-- #36: work is owned by buckets. Every event, occurrence and attempt belongs
-- for good to one of 1,024 logical buckets: the low ten bits of its event's
-- id (random in UUIDv7 and v4 ids). Instances own the buckets in 64 slots of
-- 16 through leases with an epoch (bucket_slots), balanced across the live
-- instances (dispatch_members). The bucket is also the distribution column a
-- sharded deployment would use (docs/scaling.md).
--
-- A generated column, not one the code fills: it can never disagree with its
-- event id, an instance of the previous version (a rolling upgrade) inserts
-- rows that have it, and no backfill UPDATE bloats the tables. Adding a
-- stored column rewrites the tables once, here (minutes for tens of millions
-- of rows; docs/production.md). model.BucketOf is the same function in Go.
CREATE FUNCTION qhronos_bucket(id uuid) RETURNS smallint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT (('x' || right(id::text, 3))::bit(12)::int & 1023)::smallint $$;

ALTER TABLE events ADD COLUMN bucket smallint GENERATED ALWAYS AS (qhronos_bucket(id)) STORED;
ALTER TABLE events_archive ADD COLUMN bucket smallint GENERATED ALWAYS AS (qhronos_bucket(id)) STORED;
ALTER TABLE occurrences ADD COLUMN bucket smallint GENERATED ALWAYS AS (qhronos_bucket(event_id)) STORED;
ALTER TABLE occurrences_archive ADD COLUMN bucket smallint GENERATED ALWAYS AS (qhronos_bucket(event_id)) STORED;
ALTER TABLE attempts ADD COLUMN bucket smallint GENERATED ALWAYS AS (qhronos_bucket(event_id)) STORED;
ALTER TABLE attempts_archive ADD COLUMN bucket smallint GENERATED ALWAYS AS (qhronos_bucket(event_id)) STORED;

-- A new slice must have the generated column as such to be attached, and a
-- split copies every column but the generated ones.
CREATE OR REPLACE FUNCTION qhronos_create_slice(suffix text, lo timestamptz, hi timestamptz) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    t text;
    part text;
BEGIN
    FOREACH t IN ARRAY ARRAY['occurrences' || suffix, 'attempts' || suffix] LOOP
        IF NOT EXISTS (SELECT 1 FROM qhronos_partitions(t) p WHERE p.lo = $2 AND p.hi = $3) THEN
            part := qhronos_partition_name(t, lo, hi);
            EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING GENERATED)', part, t);
            EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', t, part, lo, hi);
        END IF;
    END LOOP;
END $$;

CREATE OR REPLACE FUNCTION qhronos_split_slice(suffix text, plo timestamptz, phi timestamptz, lo timestamptz, hi timestamptz)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    t text;
    old text;
    cols text;
BEGIN
    FOREACH t IN ARRAY ARRAY['occurrences' || suffix, 'attempts' || suffix] LOOP
        old := qhronos_partition_name(t, plo, phi);
        EXECUTE format('ALTER TABLE %I DETACH PARTITION %I', t, old);
        EXECUTE format('ALTER TABLE %I RENAME TO %I', old, old || '_split');
    END LOOP;
    IF plo < lo THEN PERFORM qhronos_create_slice(suffix, plo, lo); END IF;
    PERFORM qhronos_create_slice(suffix, lo, hi);
    IF hi < phi THEN PERFORM qhronos_create_slice(suffix, hi, phi); END IF;
    FOREACH t IN ARRAY ARRAY['occurrences' || suffix, 'attempts' || suffix] LOOP
        old := qhronos_partition_name(t, plo, phi) || '_split';
        SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO cols
        FROM pg_attribute WHERE attrelid = to_regclass(t) AND attnum > 0 AND NOT attisdropped AND attgenerated = '';
        EXECUTE format('INSERT INTO %I (%s) SELECT %s FROM %I', t, cols, cols, old);
        EXECUTE format('DROP TABLE %I', old);
    END LOOP;
END $$;

-- The live instances that share the buckets: each renews its row every few
-- seconds; a row past expires_at is an instance gone.
CREATE TABLE dispatch_members (
    instance_id text        PRIMARY KEY,
    started_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL
);

-- One row per slot (buckets slot*16 … slot*16+15). owner holds it until
-- expires_at (database time); epoch grows by one at every acquisition and
-- fences every outcome written under it: a write that names an older epoch
-- changes nothing.
CREATE TABLE bucket_slots (
    slot       smallint    PRIMARY KEY,
    owner      text,
    epoch      bigint      NOT NULL DEFAULT 0,
    expires_at timestamptz
);
INSERT INTO bucket_slots (slot) SELECT generate_series(0, 63);
