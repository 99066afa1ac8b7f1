-- #36: a delivery's outcome rewrites its occurrence in place (a HOT
-- update: no new index entries, the new version on the same page).
--
-- PostgreSQL can update a row in place only when no index covers a column
-- the update changes, in its key or in its predicate, and the page has room.
-- The outcome changes status and updated_at, which six partial indexes of
-- occurrences named: every outcome wrote a new row version on another page
-- and an entry in every index whose predicate it met (14 µs a row alone,
-- where an update in place costs 5.5: BENCHMARKS.md, thirty-eighth step).
--
-- So occurrences keep only indexes on columns an outcome never changes (its
-- key, the listing and the event's instants), and two narrow tables, each
-- row mirroring one occurrence, carry the sets those indexes served:
--
--   occurrence_queue  every unfinished occurrence (waiting or held): the due
--                     set, the event's pending rows, leases and deadlines,
--                     concurrency waits, with every column a dispatcher
--                     fires a row from (the fan-out document only as a flag:
--                     queued_occurrences reads it for the rows that have one).
--                     The owner's outcome that finishes a waiting row as
--                     completed deletes its row itself, in the outcome
--                     statement; every other write keeps it by trigger.
--   occurrence_ends   every occurrence that ended otherwise than completed
--                     (failed, missed, cancelled, skipped, timed_out: rare):
--                     the ended listing and the cursors of failure and
--                     missed-run notices, by updated_at.
--
-- The views unfinished_occurrences and ended_occurrences join each to its
-- occurrence, queued_occurrences is the queue alone (the due read: no probe
-- of occurrences a row); they are what the code reads. On SQLite they are
-- plain filters of occurrences, which keeps its partial indexes: it has no
-- HOT updates.
CREATE TABLE occurrence_queue (
    id               uuid        PRIMARY KEY,
    scheduled_at     timestamptz NOT NULL,
    event_id         uuid        NOT NULL,
    bucket           smallint    NOT NULL,
    status           text        NOT NULL,
    manual           boolean     NOT NULL,
    next_attempt_at  timestamptz NOT NULL,
    lease_expires_at timestamptz,
    reason           text,
    attempt_count    integer     NOT NULL,
    lapses           integer     NOT NULL,
    manual_retry     boolean     NOT NULL,
    original_scheduled_at timestamptz,
    fanned           boolean     NOT NULL -- fanout_json IS NOT NULL
);
CREATE INDEX occurrence_queue_due ON occurrence_queue (next_attempt_at, id) WHERE status IN ('pending', 'retrying');
CREATE INDEX occurrence_queue_event ON occurrence_queue (event_id, next_attempt_at);
CREATE INDEX occurrence_queue_held ON occurrence_queue (lease_expires_at)
    WHERE status IN ('dispatching', 'awaiting_ack', 'running');
CREATE INDEX occurrence_queue_instant ON occurrence_queue (scheduled_at, id);
CREATE INDEX occurrence_queue_concurrency_wait ON occurrence_queue (scheduled_at, id)
    WHERE reason = 'concurrency_wait' AND status = 'pending';

CREATE TABLE occurrence_ends (
    id           uuid        PRIMARY KEY,
    scheduled_at timestamptz NOT NULL,
    event_id     uuid        NOT NULL,
    status       text        NOT NULL,
    reason       text,
    updated_at   timestamptz NOT NULL
);
CREATE INDEX occurrence_ends_listing ON occurrence_ends (status, scheduled_at DESC, id DESC);
CREATE INDEX occurrence_ends_changed ON occurrence_ends (updated_at, id);
CREATE INDEX occurrence_ends_instant ON occurrence_ends (scheduled_at);

INSERT INTO occurrence_queue (id, scheduled_at, event_id, bucket, status, manual, next_attempt_at, lease_expires_at, reason,
    attempt_count, lapses, manual_retry, original_scheduled_at, fanned)
SELECT id, scheduled_at, event_id, bucket, status, manual, next_attempt_at, lease_expires_at, reason,
    attempt_count, lapses, manual_retry, original_scheduled_at, fanout_json IS NOT NULL
FROM occurrences WHERE status IN ('pending', 'retrying', 'dispatching', 'awaiting_ack', 'running');
INSERT INTO occurrence_ends (id, scheduled_at, event_id, status, reason, updated_at)
SELECT id, scheduled_at, event_id, status, reason, updated_at
FROM occurrences WHERE status IN ('failed', 'missed', 'cancelled', 'skipped', 'timed_out');

-- qhronos_mirror_occurrence makes the mirrors of the occurrence o agree with
-- it: in the queue while unfinished, in the ends while it ended otherwise
-- than completed, in neither else.
CREATE FUNCTION qhronos_mirror_occurrence(o occurrences) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF o.status IN ('pending', 'retrying', 'dispatching', 'awaiting_ack', 'running') THEN
        INSERT INTO occurrence_queue (id, scheduled_at, event_id, bucket, status, manual, next_attempt_at,
            lease_expires_at, reason, attempt_count, lapses, manual_retry, original_scheduled_at, fanned)
        VALUES (o.id, o.scheduled_at, o.event_id, o.bucket, o.status, o.manual, o.next_attempt_at,
            o.lease_expires_at, o.reason, o.attempt_count, o.lapses, o.manual_retry, o.original_scheduled_at,
            o.fanout_json IS NOT NULL)
        ON CONFLICT (id) DO UPDATE SET scheduled_at = EXCLUDED.scheduled_at, status = EXCLUDED.status,
            manual = EXCLUDED.manual, next_attempt_at = EXCLUDED.next_attempt_at,
            lease_expires_at = EXCLUDED.lease_expires_at, reason = EXCLUDED.reason,
            attempt_count = EXCLUDED.attempt_count, lapses = EXCLUDED.lapses, manual_retry = EXCLUDED.manual_retry,
            original_scheduled_at = EXCLUDED.original_scheduled_at, fanned = EXCLUDED.fanned;
    ELSE
        DELETE FROM occurrence_queue WHERE id = o.id;
    END IF;
    IF o.status IN ('failed', 'missed', 'cancelled', 'skipped', 'timed_out') THEN
        INSERT INTO occurrence_ends (id, scheduled_at, event_id, status, reason, updated_at)
        VALUES (o.id, o.scheduled_at, o.event_id, o.status, o.reason, o.updated_at)
        ON CONFLICT (id) DO UPDATE SET scheduled_at = EXCLUDED.scheduled_at, status = EXCLUDED.status,
            reason = EXCLUDED.reason, updated_at = EXCLUDED.updated_at;
    ELSE
        DELETE FROM occurrence_ends WHERE id = o.id;
    END IF;
END $$;

CREATE FUNCTION qhronos_mirror_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM occurrence_queue WHERE id = OLD.id;
        DELETE FROM occurrence_ends WHERE id = OLD.id;
    ELSE
        PERFORM qhronos_mirror_occurrence(NEW);
    END IF;
    RETURN NULL;
END $$;

-- New rows, however inserted (VALUES, COPY, a split's move): once a
-- statement, from its transition table.
CREATE FUNCTION qhronos_mirror_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO occurrence_queue (id, scheduled_at, event_id, bucket, status, manual, next_attempt_at,
        lease_expires_at, reason, attempt_count, lapses, manual_retry, original_scheduled_at, fanned)
    SELECT id, scheduled_at, event_id, bucket, status, manual, next_attempt_at, lease_expires_at, reason,
        attempt_count, lapses, manual_retry, original_scheduled_at, fanout_json IS NOT NULL
    FROM inserted WHERE status IN ('pending', 'retrying', 'dispatching', 'awaiting_ack', 'running')
    ON CONFLICT (id) DO UPDATE SET scheduled_at = EXCLUDED.scheduled_at, status = EXCLUDED.status,
        manual = EXCLUDED.manual, next_attempt_at = EXCLUDED.next_attempt_at,
        lease_expires_at = EXCLUDED.lease_expires_at, reason = EXCLUDED.reason,
        attempt_count = EXCLUDED.attempt_count, lapses = EXCLUDED.lapses, manual_retry = EXCLUDED.manual_retry,
        original_scheduled_at = EXCLUDED.original_scheduled_at, fanned = EXCLUDED.fanned;
    INSERT INTO occurrence_ends (id, scheduled_at, event_id, status, reason, updated_at)
    SELECT id, scheduled_at, event_id, status, reason, updated_at
    FROM inserted WHERE status IN ('failed', 'missed', 'cancelled', 'skipped', 'timed_out')
    ON CONFLICT (id) DO UPDATE SET scheduled_at = EXCLUDED.scheduled_at, status = EXCLUDED.status,
        reason = EXCLUDED.reason, updated_at = EXCLUDED.updated_at;
    RETURN NULL;
END $$;

CREATE TRIGGER occurrences_mirror_insert AFTER INSERT ON occurrences
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION qhronos_mirror_inserted();

-- A change of what a mirror holds. Not the owner's outcome that completes a
-- waiting row (it counts the attempt it read) in a transaction that says it
-- deletes the queue row itself (qhronos.outcome_drops_queue, set by
-- Store.RecordOutcomes): no trigger call per delivery. An instance of an
-- older build, during a rolling upgrade, says nothing, and its outcomes
-- are mirrored here like any other write. A row moved to
-- another week's slice is deleted from its own (the delete below) and
-- inserted into the other, which fires no statement trigger for inserts:
-- its writer mirrors it again (Store.mirror).
CREATE TRIGGER occurrences_mirror_update AFTER UPDATE ON occurrences FOR EACH ROW
    WHEN ((OLD.status IS DISTINCT FROM NEW.status OR OLD.scheduled_at IS DISTINCT FROM NEW.scheduled_at
            OR OLD.manual IS DISTINCT FROM NEW.manual OR OLD.next_attempt_at IS DISTINCT FROM NEW.next_attempt_at
            OR OLD.lease_expires_at IS DISTINCT FROM NEW.lease_expires_at OR OLD.reason IS DISTINCT FROM NEW.reason
            OR OLD.attempt_count IS DISTINCT FROM NEW.attempt_count OR OLD.lapses IS DISTINCT FROM NEW.lapses
            OR OLD.manual_retry IS DISTINCT FROM NEW.manual_retry
            OR OLD.original_scheduled_at IS DISTINCT FROM NEW.original_scheduled_at
            OR (OLD.fanout_json IS NULL) <> (NEW.fanout_json IS NULL))
        AND NOT (OLD.status IN ('pending', 'retrying') AND NEW.status = 'completed'
            AND NEW.attempt_count > OLD.attempt_count
            AND COALESCE(current_setting('qhronos.outcome_drops_queue', true), '') = 'on')
        OR (NEW.status IN ('failed', 'missed', 'cancelled', 'skipped', 'timed_out')
            AND NEW.updated_at IS DISTINCT FROM OLD.updated_at))
    EXECUTE FUNCTION qhronos_mirror_changed();
CREATE TRIGGER occurrences_mirror_delete AFTER DELETE ON occurrences FOR EACH ROW
    WHEN (OLD.status <> 'completed')
    EXECUTE FUNCTION qhronos_mirror_changed();

CREATE VIEW unfinished_occurrences AS
SELECT q.id, q.event_id, q.scheduled_at, q.status, q.manual, q.attempt_count, q.next_attempt_at, o.lease_token,
    o.lease_owner, q.lease_expires_at, o.status_code, o.response_body, o.error_message, o.started_at,
    o.completed_at, o.created_at, o.updated_at, q.manual_retry, o.acked_at, q.reason, q.original_scheduled_at,
    q.lapses, o.run_status, o.run_output, o.run_reported_at, o.heartbeat_at, o.fanout_json, q.bucket
FROM occurrence_queue q JOIN occurrences o ON o.id = q.id AND o.scheduled_at = q.scheduled_at
-- A guard, not a filter: a queue row always mirrors an unfinished row. Were
-- one ever left behind, its finished occurrence would not fire again.
WHERE o.status IN ('pending', 'retrying', 'dispatching', 'awaiting_ack', 'running');

-- The queue alone, with the fan-out document of the rows that have one.
-- (A CASE, so the document's row is looked up only for a row that has one:
-- a join would probe occurrences for every row.)
CREATE VIEW queued_occurrences AS
SELECT q.id, q.event_id, q.scheduled_at, q.status, q.manual, q.attempt_count, q.next_attempt_at, q.lease_expires_at,
    q.reason, q.original_scheduled_at, q.lapses, q.manual_retry,
    CASE WHEN q.fanned THEN (SELECT o.fanout_json FROM occurrences o
        WHERE o.id = q.id AND o.scheduled_at = q.scheduled_at) END AS fanout_json, q.bucket
FROM occurrence_queue q;

CREATE VIEW ended_occurrences AS
SELECT x.id, x.event_id, x.scheduled_at, x.status, o.manual, o.attempt_count, o.next_attempt_at, o.lease_token,
    o.lease_owner, o.lease_expires_at, o.status_code, o.response_body, o.error_message, o.started_at,
    o.completed_at, o.created_at, x.updated_at, o.manual_retry, o.acked_at, x.reason, o.original_scheduled_at,
    o.lapses, o.run_status, o.run_output, o.run_reported_at, o.heartbeat_at, o.fanout_json, o.bucket
FROM occurrence_ends x JOIN occurrences o ON o.id = x.id AND o.scheduled_at = x.scheduled_at;

DROP INDEX occurrences_due, occurrences_event_pending, occurrences_leased, occurrences_terminal,
    occurrences_ended_listing, occurrences_concurrency_wait;

-- Room on each page of the live slices for an outcome's new row version.
DO $$
DECLARE
    part regclass;
BEGIN
    FOR part IN SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'occurrences'::regclass LOOP
        EXECUTE format('ALTER TABLE %s SET (fillfactor = 50)', part);
    END LOOP;
END $$;

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
            IF t = 'occurrences' THEN
                EXECUTE format('ALTER TABLE %I SET (fillfactor = 50)', part);
            END IF;
            EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', t, part, lo, hi);
        END IF;
    END LOOP;
END $$;
