-- Rollups (#24): per-minute counters that /stats, /stats/timeline and the
-- console overview read instead of raw history. Kept by triggers in the
-- transaction that changes the rows, so they are exact the moment it
-- commits, whichever code path made the change. SQLite has one writer, so
-- its triggers upsert the one row of each key directly (compacted from the
-- start); PostgreSQL's append fresh rows that a compactor folds (see its
-- migration), and the reads, which sum every row of a key, are the same.
-- Instants are the store's fixed-width text; a minute is its first 16
-- characters, an hour its first 13.
CREATE TABLE occurrence_rollups (
    minute      TIMESTAMP NOT NULL,
    action_type TEXT    NOT NULL,
    status      TEXT    NOT NULL,
    reason      TEXT    NOT NULL,
    n           INTEGER NOT NULL,
    compacted   INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (minute, action_type, status, reason)
);
CREATE TABLE attempt_rollups (
    minute      TIMESTAMP NOT NULL,
    action_type TEXT    NOT NULL,
    endpoint_id TEXT    NOT NULL,
    outcome     TEXT    NOT NULL,
    n           INTEGER NOT NULL,
    compacted   INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (minute, action_type, endpoint_id, outcome)
);
-- Histograms of durations (metric 0) and first scheduled attempts'
-- lateness (metric 1) per minute ('m'), quarter hour ('q') and hour ('h');
-- buckets as in the
-- PostgreSQL migration (exact below 128, then 64 per power of two).
CREATE TABLE latency_rollups (
    width       TEXT    NOT NULL,
    start       TIMESTAMP NOT NULL,
    action_type TEXT    NOT NULL,
    metric      INTEGER NOT NULL,
    bucket      INTEGER NOT NULL,
    n           INTEGER NOT NULL,
    compacted   INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (width, start, action_type, metric, bucket)
);

CREATE TRIGGER occurrences_rollup_insert AFTER INSERT ON occurrences WHEN NEW.status IN ('completed', 'failed', 'missed', 'cancelled', 'skipped')
BEGIN
    INSERT INTO occurrence_rollups (minute, action_type, status, reason, n)
    SELECT substr(NEW.scheduled_at, 1, 16) || ':00.000000Z', e.action_type, NEW.status, COALESCE(NEW.reason, ''), 1
    FROM events e WHERE e.id = NEW.event_id
    ON CONFLICT (minute, action_type, status, reason) DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER occurrences_rollup_leave AFTER UPDATE ON occurrences
WHEN OLD.status IN ('completed', 'failed', 'missed', 'cancelled', 'skipped') AND (NEW.status IS NOT OLD.status OR NEW.reason IS NOT OLD.reason
    OR NEW.scheduled_at IS NOT OLD.scheduled_at OR NEW.event_id IS NOT OLD.event_id)
BEGIN
    INSERT INTO occurrence_rollups (minute, action_type, status, reason, n)
    SELECT substr(OLD.scheduled_at, 1, 16) || ':00.000000Z', e.action_type, OLD.status, COALESCE(OLD.reason, ''), -1
    FROM events e WHERE e.id = OLD.event_id
    ON CONFLICT (minute, action_type, status, reason) DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER occurrences_rollup_enter AFTER UPDATE ON occurrences
WHEN NEW.status IN ('completed', 'failed', 'missed', 'cancelled', 'skipped') AND (NEW.status IS NOT OLD.status OR NEW.reason IS NOT OLD.reason
    OR NEW.scheduled_at IS NOT OLD.scheduled_at OR NEW.event_id IS NOT OLD.event_id)
BEGIN
    INSERT INTO occurrence_rollups (minute, action_type, status, reason, n)
    SELECT substr(NEW.scheduled_at, 1, 16) || ':00.000000Z', e.action_type, NEW.status, COALESCE(NEW.reason, ''), 1
    FROM events e WHERE e.id = NEW.event_id
    ON CONFLICT (minute, action_type, status, reason) DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER attempts_rollup_insert AFTER INSERT ON attempts
BEGIN
    INSERT INTO attempt_rollups (minute, action_type, endpoint_id, outcome, n)
    SELECT substr(NEW.started_at, 1, 16) || ':00.000000Z', e.action_type, COALESCE(NEW.endpoint_id, ''), NEW.outcome, 1
    FROM events e WHERE e.id = NEW.event_id
    ON CONFLICT (minute, action_type, endpoint_id, outcome) DO UPDATE SET n = n + excluded.n;
    INSERT INTO latency_rollups (width, start, action_type, metric, bucket, n)
    SELECT x.width, x.start, e.action_type, x.metric, CASE WHEN x.v < 128 THEN x.v WHEN x.v < 256 THEN x.v - x.v % 2 WHEN x.v < 512 THEN x.v - x.v % 4 WHEN x.v < 1024 THEN x.v - x.v % 8 WHEN x.v < 2048 THEN x.v - x.v % 16 WHEN x.v < 4096 THEN x.v - x.v % 32 WHEN x.v < 8192 THEN x.v - x.v % 64 WHEN x.v < 16384 THEN x.v - x.v % 128 WHEN x.v < 32768 THEN x.v - x.v % 256 WHEN x.v < 65536 THEN x.v - x.v % 512 WHEN x.v < 131072 THEN x.v - x.v % 1024 WHEN x.v < 262144 THEN x.v - x.v % 2048 WHEN x.v < 524288 THEN x.v - x.v % 4096 WHEN x.v < 1048576 THEN x.v - x.v % 8192 WHEN x.v < 2097152 THEN x.v - x.v % 16384 WHEN x.v < 4194304 THEN x.v - x.v % 32768 WHEN x.v < 8388608 THEN x.v - x.v % 65536 WHEN x.v < 16777216 THEN x.v - x.v % 131072 WHEN x.v < 33554432 THEN x.v - x.v % 262144 WHEN x.v < 67108864 THEN x.v - x.v % 524288 WHEN x.v < 134217728 THEN x.v - x.v % 1048576 WHEN x.v < 268435456 THEN x.v - x.v % 2097152 WHEN x.v < 536870912 THEN x.v - x.v % 4194304 WHEN x.v < 1073741824 THEN x.v - x.v % 8388608 WHEN x.v < 2147483648 THEN x.v - x.v % 16777216 WHEN x.v < 4294967296 THEN x.v - x.v % 33554432 WHEN x.v < 8589934592 THEN x.v - x.v % 67108864 WHEN x.v < 17179869184 THEN x.v - x.v % 134217728 WHEN x.v < 34359738368 THEN x.v - x.v % 268435456 WHEN x.v < 68719476736 THEN x.v - x.v % 536870912 WHEN x.v < 137438953472 THEN x.v - x.v % 1073741824 WHEN x.v < 274877906944 THEN x.v - x.v % 2147483648 WHEN x.v < 549755813888 THEN x.v - x.v % 4294967296 WHEN x.v < 1099511627776 THEN x.v - x.v % 8589934592 WHEN x.v < 2199023255552 THEN x.v - x.v % 17179869184 WHEN x.v < 4398046511104 THEN x.v - x.v % 34359738368 WHEN x.v < 8796093022208 THEN x.v - x.v % 68719476736 WHEN x.v < 17592186044416 THEN x.v - x.v % 137438953472 WHEN x.v < 35184372088832 THEN x.v - x.v % 274877906944 WHEN x.v < 70368744177664 THEN x.v - x.v % 549755813888 WHEN x.v < 140737488355328 THEN x.v - x.v % 1099511627776 ELSE x.v - x.v % 1099511627776 END, 1
    FROM (SELECT 'm' AS width, substr(NEW.started_at, 1, 16) || ':00.000000Z' AS start, 0 AS metric, NEW.duration_ms AS v
          UNION ALL SELECT 'h', substr(NEW.started_at, 1, 13) || ':00:00.000000Z', 0, NEW.duration_ms
          UNION ALL SELECT 'q', substr(NEW.started_at, 1, 14) || printf('%02d', CAST(substr(NEW.started_at, 15, 2) AS INTEGER) / 15 * 15) || ':00.000000Z', 0, NEW.duration_ms
          UNION ALL SELECT 'm', substr(NEW.started_at, 1, 16) || ':00.000000Z', 1, NEW.lateness_ms WHERE NEW.attempt = 1 AND NOT NEW.manual
          UNION ALL SELECT 'q', substr(NEW.started_at, 1, 14) || printf('%02d', CAST(substr(NEW.started_at, 15, 2) AS INTEGER) / 15 * 15) || ':00.000000Z', 1, NEW.lateness_ms WHERE NEW.attempt = 1 AND NOT NEW.manual
          UNION ALL SELECT 'h', substr(NEW.started_at, 1, 13) || ':00:00.000000Z', 1, NEW.lateness_ms WHERE NEW.attempt = 1 AND NOT NEW.manual) x
    JOIN events e ON e.id = NEW.event_id
    WHERE true
    ON CONFLICT (width, start, action_type, metric, bucket) DO UPDATE SET n = n + excluded.n;
END;

-- Backfill from the history already there.
INSERT INTO occurrence_rollups (minute, action_type, status, reason, n)
SELECT substr(o.scheduled_at, 1, 16) || ':00.000000Z', e.action_type, o.status, COALESCE(o.reason, ''), COUNT(*)
FROM occurrences o JOIN events e ON e.id = o.event_id
WHERE o.status IN ('completed', 'failed', 'missed', 'cancelled', 'skipped')
GROUP BY 1, 2, 3, 4;
INSERT INTO attempt_rollups (minute, action_type, endpoint_id, outcome, n)
SELECT substr(a.started_at, 1, 16) || ':00.000000Z', e.action_type, COALESCE(a.endpoint_id, ''), a.outcome, COUNT(*)
FROM attempts a JOIN events e ON e.id = a.event_id
GROUP BY 1, 2, 3, 4;
INSERT INTO latency_rollups (width, start, action_type, metric, bucket, n)
SELECT x.width, x.start, x.action_type, x.metric, CASE WHEN x.v < 128 THEN x.v WHEN x.v < 256 THEN x.v - x.v % 2 WHEN x.v < 512 THEN x.v - x.v % 4 WHEN x.v < 1024 THEN x.v - x.v % 8 WHEN x.v < 2048 THEN x.v - x.v % 16 WHEN x.v < 4096 THEN x.v - x.v % 32 WHEN x.v < 8192 THEN x.v - x.v % 64 WHEN x.v < 16384 THEN x.v - x.v % 128 WHEN x.v < 32768 THEN x.v - x.v % 256 WHEN x.v < 65536 THEN x.v - x.v % 512 WHEN x.v < 131072 THEN x.v - x.v % 1024 WHEN x.v < 262144 THEN x.v - x.v % 2048 WHEN x.v < 524288 THEN x.v - x.v % 4096 WHEN x.v < 1048576 THEN x.v - x.v % 8192 WHEN x.v < 2097152 THEN x.v - x.v % 16384 WHEN x.v < 4194304 THEN x.v - x.v % 32768 WHEN x.v < 8388608 THEN x.v - x.v % 65536 WHEN x.v < 16777216 THEN x.v - x.v % 131072 WHEN x.v < 33554432 THEN x.v - x.v % 262144 WHEN x.v < 67108864 THEN x.v - x.v % 524288 WHEN x.v < 134217728 THEN x.v - x.v % 1048576 WHEN x.v < 268435456 THEN x.v - x.v % 2097152 WHEN x.v < 536870912 THEN x.v - x.v % 4194304 WHEN x.v < 1073741824 THEN x.v - x.v % 8388608 WHEN x.v < 2147483648 THEN x.v - x.v % 16777216 WHEN x.v < 4294967296 THEN x.v - x.v % 33554432 WHEN x.v < 8589934592 THEN x.v - x.v % 67108864 WHEN x.v < 17179869184 THEN x.v - x.v % 134217728 WHEN x.v < 34359738368 THEN x.v - x.v % 268435456 WHEN x.v < 68719476736 THEN x.v - x.v % 536870912 WHEN x.v < 137438953472 THEN x.v - x.v % 1073741824 WHEN x.v < 274877906944 THEN x.v - x.v % 2147483648 WHEN x.v < 549755813888 THEN x.v - x.v % 4294967296 WHEN x.v < 1099511627776 THEN x.v - x.v % 8589934592 WHEN x.v < 2199023255552 THEN x.v - x.v % 17179869184 WHEN x.v < 4398046511104 THEN x.v - x.v % 34359738368 WHEN x.v < 8796093022208 THEN x.v - x.v % 68719476736 WHEN x.v < 17592186044416 THEN x.v - x.v % 137438953472 WHEN x.v < 35184372088832 THEN x.v - x.v % 274877906944 WHEN x.v < 70368744177664 THEN x.v - x.v % 549755813888 WHEN x.v < 140737488355328 THEN x.v - x.v % 1099511627776 ELSE x.v - x.v % 1099511627776 END, COUNT(*)
FROM (SELECT 'm' AS width, substr(a.started_at, 1, 16) || ':00.000000Z' AS start, e.action_type, 0 AS metric, a.duration_ms AS v
      FROM attempts a JOIN events e ON e.id = a.event_id
      UNION ALL SELECT 'h', substr(a.started_at, 1, 13) || ':00:00.000000Z', e.action_type, 0, a.duration_ms
      FROM attempts a JOIN events e ON e.id = a.event_id
      UNION ALL SELECT 'q', substr(a.started_at, 1, 14) || printf('%02d', CAST(substr(a.started_at, 15, 2) AS INTEGER) / 15 * 15) || ':00.000000Z', e.action_type, 0, a.duration_ms
      FROM attempts a JOIN events e ON e.id = a.event_id
      UNION ALL SELECT 'm', substr(a.started_at, 1, 16) || ':00.000000Z', e.action_type, 1, a.lateness_ms
      FROM attempts a JOIN events e ON e.id = a.event_id WHERE a.attempt = 1 AND NOT a.manual
      UNION ALL SELECT 'q', substr(a.started_at, 1, 14) || printf('%02d', CAST(substr(a.started_at, 15, 2) AS INTEGER) / 15 * 15) || ':00.000000Z', e.action_type, 1, a.lateness_ms
      FROM attempts a JOIN events e ON e.id = a.event_id WHERE a.attempt = 1 AND NOT a.manual
      UNION ALL SELECT 'h', substr(a.started_at, 1, 13) || ':00:00.000000Z', e.action_type, 1, a.lateness_ms
      FROM attempts a JOIN events e ON e.id = a.event_id WHERE a.attempt = 1 AND NOT a.manual) x
GROUP BY 1, 2, 3, 4, 5;

-- A listing filtered to a rare ending (status=failed, missed, cancelled,
-- skipped) reads its page from an index in its own order instead of
-- filtering the whole history; status=completed (most of the history) reads
-- occurrences_listing and filters. Partial, so that the hot path's updates
-- of pending and leased rows never touch it, and so that the per-event
-- lookups of unfinished rows are never planned on it.
CREATE INDEX occurrences_ended_listing ON occurrences (status, scheduled_at DESC, id DESC)
    WHERE status IN ('failed', 'missed', 'cancelled', 'skipped');
