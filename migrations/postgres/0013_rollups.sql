-- Rollups (#24): per-minute counters that /stats, /stats/timeline and the
-- console overview read instead of raw history, so that their answers cost
-- the same with a day or a year of occurrences and attempts.
--
-- Statement-level triggers write them in the transaction that changes the
-- rows, so they are exact the moment the change commits, whichever code path
-- made it (outcomes, the rescuer, pauses, calendars, replays, bulk creates).
-- A trigger only INSERTs its statement's counts, grouped (one row per key per
-- statement), as "fresh" rows: no upsert, so no row lock that concurrent
-- outcome transactions would queue on for the current minute's counter (an
-- upsert serialized them and cut a 10,000-delivery burst to a third). Reads
-- sum every row of a key. The rollup compactor (CompactRollups, every few
-- seconds) folds fresh rows into one "compacted" row per key, so a key has
-- one row plus what arrived since the last compaction.
--
-- occurrence_rollups counts finished occurrences by the minute of their
-- scheduled instant; unfinished ones are the live queue, counted from the
-- partial indexes on the waiting and held states.
CREATE TABLE occurrence_rollups (
    minute      timestamptz NOT NULL,
    action_type text        NOT NULL,
    status      text        NOT NULL,
    reason      text        NOT NULL,
    n           bigint      NOT NULL,
    compacted   boolean     NOT NULL DEFAULT false
);
CREATE UNIQUE INDEX occurrence_rollups_key ON occurrence_rollups (minute, action_type, status, reason) WHERE compacted;
CREATE INDEX occurrence_rollups_by_minute ON occurrence_rollups (minute);
CREATE INDEX occurrence_rollups_fresh ON occurrence_rollups (minute) WHERE NOT compacted;
-- attempt_rollups counts attempts by the minute they started, action type,
-- endpoint ('' for none) and outcome.
CREATE TABLE attempt_rollups (
    minute      timestamptz NOT NULL,
    action_type text        NOT NULL,
    endpoint_id text        NOT NULL,
    outcome     text        NOT NULL,
    n           bigint      NOT NULL,
    compacted   boolean     NOT NULL DEFAULT false
);
CREATE UNIQUE INDEX attempt_rollups_key ON attempt_rollups (minute, action_type, endpoint_id, outcome) WHERE compacted;
CREATE INDEX attempt_rollups_by_minute ON attempt_rollups (minute);
CREATE INDEX attempt_rollups_fresh ON attempt_rollups (minute) WHERE NOT compacted;
-- latency_rollups are histograms of attempt durations (metric 0) and of the
-- lateness of first scheduled attempts (metric 1), per minute (width 'm'),
-- quarter hour ('q') and hour ('h'): a day's percentiles read 24 hourly
-- histograms, not 1,440, and a day's 15-minute chart 96. A bucket is named
-- by its lowest value: exact below 128 ms, then 64 buckets per power of two
-- (under 1.6 % below the value), see qhronos_latency_bucket; nearest-rank
-- percentiles are read off the merged histogram.
CREATE TABLE latency_rollups (
    width       char(1)     NOT NULL,
    start       timestamptz NOT NULL,
    action_type text        NOT NULL,
    metric      smallint    NOT NULL,
    bucket      bigint      NOT NULL,
    n           bigint      NOT NULL,
    compacted   boolean     NOT NULL DEFAULT false
);
CREATE UNIQUE INDEX latency_rollups_key ON latency_rollups (width, start, action_type, metric, bucket) WHERE compacted;
CREATE INDEX latency_rollups_by_start ON latency_rollups (width, start);
CREATE INDEX latency_rollups_fresh ON latency_rollups (start) WHERE NOT compacted;

CREATE FUNCTION qhronos_latency_bucket(v bigint) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT CASE WHEN v < 128 THEN v WHEN v < 256 THEN v - v % 2 WHEN v < 512 THEN v - v % 4 WHEN v < 1024 THEN v - v % 8 WHEN v < 2048 THEN v - v % 16 WHEN v < 4096 THEN v - v % 32 WHEN v < 8192 THEN v - v % 64 WHEN v < 16384 THEN v - v % 128 WHEN v < 32768 THEN v - v % 256 WHEN v < 65536 THEN v - v % 512 WHEN v < 131072 THEN v - v % 1024 WHEN v < 262144 THEN v - v % 2048 WHEN v < 524288 THEN v - v % 4096 WHEN v < 1048576 THEN v - v % 8192 WHEN v < 2097152 THEN v - v % 16384 WHEN v < 4194304 THEN v - v % 32768 WHEN v < 8388608 THEN v - v % 65536 WHEN v < 16777216 THEN v - v % 131072 WHEN v < 33554432 THEN v - v % 262144 WHEN v < 67108864 THEN v - v % 524288 WHEN v < 134217728 THEN v - v % 1048576 WHEN v < 268435456 THEN v - v % 2097152 WHEN v < 536870912 THEN v - v % 4194304 WHEN v < 1073741824 THEN v - v % 8388608 WHEN v < 2147483648 THEN v - v % 16777216 WHEN v < 4294967296 THEN v - v % 33554432 WHEN v < 8589934592 THEN v - v % 67108864 WHEN v < 17179869184 THEN v - v % 134217728 WHEN v < 34359738368 THEN v - v % 268435456 WHEN v < 68719476736 THEN v - v % 536870912 WHEN v < 137438953472 THEN v - v % 1073741824 WHEN v < 274877906944 THEN v - v % 2147483648 WHEN v < 549755813888 THEN v - v % 4294967296 WHEN v < 1099511627776 THEN v - v % 8589934592 WHEN v < 2199023255552 THEN v - v % 17179869184 WHEN v < 4398046511104 THEN v - v % 34359738368 WHEN v < 8796093022208 THEN v - v % 68719476736 WHEN v < 17592186044416 THEN v - v % 137438953472 WHEN v < 35184372088832 THEN v - v % 274877906944 WHEN v < 70368744177664 THEN v - v % 549755813888 WHEN v < 140737488355328 THEN v - v % 1099511627776 ELSE v - v % 1099511627776 END $$;

CREATE FUNCTION qhronos_rollup_occurrences() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO occurrence_rollups (minute, action_type, status, reason, n)
        SELECT date_trunc('minute', o.scheduled_at), e.action_type, o.status, COALESCE(o.reason, ''),
               COUNT(*)
        FROM new_rows o JOIN events e ON e.id = o.event_id
        WHERE o.status IN ('completed', 'failed', 'missed', 'cancelled', 'skipped')
        GROUP BY 1, 2, 3, 4;
    ELSE
        INSERT INTO occurrence_rollups (minute, action_type, status, reason, n)
        SELECT d.minute, e.action_type, d.status, d.reason, SUM(d.n)
        FROM (SELECT date_trunc('minute', scheduled_at) AS minute, event_id, status, COALESCE(reason, '') AS reason,
                     1 AS n
              FROM new_rows WHERE status IN ('completed', 'failed', 'missed', 'cancelled', 'skipped')
              UNION ALL
              SELECT date_trunc('minute', scheduled_at), event_id, status, COALESCE(reason, ''), -1
              FROM old_rows WHERE status IN ('completed', 'failed', 'missed', 'cancelled', 'skipped')) d
        JOIN events e ON e.id = d.event_id
        GROUP BY 1, 2, 3, 4 HAVING SUM(d.n) <> 0;
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION qhronos_rollup_attempts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO attempt_rollups (minute, action_type, endpoint_id, outcome, n)
    SELECT date_trunc('minute', a.started_at), e.action_type, COALESCE(a.endpoint_id::text, ''), a.outcome, COUNT(*)
    FROM new_rows a JOIN events e ON e.id = a.event_id
    GROUP BY 1, 2, 3, 4;
    INSERT INTO latency_rollups (width, start, action_type, metric, bucket, n)
    SELECT w.width, CASE w.width WHEN 'm' THEN date_trunc('minute', a.started_at) WHEN 'q' THEN date_bin('15 minutes', a.started_at, TIMESTAMPTZ '2000-01-01 00:00:00Z') ELSE date_trunc('hour', a.started_at) END, e.action_type,
           m.metric, qhronos_latency_bucket(CASE m.metric WHEN 0 THEN a.duration_ms ELSE a.lateness_ms END),
           COUNT(*)
    FROM new_rows a JOIN events e ON e.id = a.event_id
    CROSS JOIN (VALUES ('m'), ('q'), ('h')) AS w (width)
    JOIN (VALUES (0), (1)) AS m (metric) ON m.metric = 0 OR (a.attempt = 1 AND NOT a.manual)
    GROUP BY 1, 2, 3, 4, 5;
    RETURN NULL;
END $$;

CREATE TRIGGER occurrences_rollup_insert AFTER INSERT ON occurrences
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION qhronos_rollup_occurrences();
CREATE TRIGGER occurrences_rollup_update AFTER UPDATE ON occurrences
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION qhronos_rollup_occurrences();
CREATE TRIGGER attempts_rollup_insert AFTER INSERT ON attempts
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION qhronos_rollup_attempts();

-- Backfill from the history already there, so that /stats does not start
-- from zero after the upgrade: one compacted row per key.
INSERT INTO occurrence_rollups (minute, action_type, status, reason, n, compacted)
SELECT date_trunc('minute', o.scheduled_at), e.action_type, o.status, COALESCE(o.reason, ''), COUNT(*), true
FROM occurrences o JOIN events e ON e.id = o.event_id
WHERE o.status IN ('completed', 'failed', 'missed', 'cancelled', 'skipped')
GROUP BY 1, 2, 3, 4;
INSERT INTO attempt_rollups (minute, action_type, endpoint_id, outcome, n, compacted)
SELECT date_trunc('minute', a.started_at), e.action_type, COALESCE(a.endpoint_id::text, ''), a.outcome, COUNT(*), true
FROM attempts a JOIN events e ON e.id = a.event_id
GROUP BY 1, 2, 3, 4;
INSERT INTO latency_rollups (width, start, action_type, metric, bucket, n, compacted)
SELECT w.width, CASE w.width WHEN 'm' THEN date_trunc('minute', a.started_at) WHEN 'q' THEN date_bin('15 minutes', a.started_at, TIMESTAMPTZ '2000-01-01 00:00:00Z') ELSE date_trunc('hour', a.started_at) END, e.action_type,
       m.metric, qhronos_latency_bucket(CASE m.metric WHEN 0 THEN a.duration_ms ELSE a.lateness_ms END), COUNT(*), true
FROM attempts a JOIN events e ON e.id = a.event_id
CROSS JOIN (VALUES ('m'), ('q'), ('h')) AS w (width)
JOIN (VALUES (0), (1)) AS m (metric) ON m.metric = 0 OR (a.attempt = 1 AND NOT a.manual)
GROUP BY 1, 2, 3, 4, 5;

-- A listing filtered to a rare ending (status=failed, missed, cancelled,
-- skipped) reads its page from an index in its own order instead of
-- filtering the whole history; status=completed (most of the history) reads
-- occurrences_listing and filters. Partial, so that the hot path's updates
-- of pending and leased rows never touch it, and so that the per-event
-- lookups of unfinished rows are never planned on it.
CREATE INDEX occurrences_ended_listing ON occurrences (status, scheduled_at DESC, id DESC)
    WHERE status IN ('failed', 'missed', 'cancelled', 'skipped');
