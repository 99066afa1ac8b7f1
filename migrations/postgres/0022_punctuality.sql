-- The punctuality report (#38, GET /stats/punctuality): per event and hour of
-- the scheduled instant, how the instants ended and a histogram of how late
-- their first scheduled attempt was ("bucket:count,...", buckets named by
-- their lower bound in ms: repository.PunctualityBucket). The outcome
-- transaction appends fresh rows (no index: the cheapest write on the hot
-- path); the rollup compactor folds them into one row per event and hour
-- (width 'h') and per event and day ('d') of punctuality_rollups, which the
-- report reads. Existing history is counted here, once.
CREATE TABLE punctuality_fresh (
    start      timestamptz NOT NULL,
    event_id   uuid NOT NULL,
    completed  bigint NOT NULL,
    failed     bigint NOT NULL,
    missed     bigint NOT NULL,
    skipped    bigint NOT NULL,
    cancelled  bigint NOT NULL,
    lateness   text   NOT NULL
);
CREATE TABLE punctuality_rollups (
    width      char(1) NOT NULL,
    start      timestamptz NOT NULL,
    event_id   uuid NOT NULL,
    completed  bigint NOT NULL,
    failed     bigint NOT NULL,
    missed     bigint NOT NULL,
    skipped    bigint NOT NULL,
    cancelled  bigint NOT NULL,
    lateness   text   NOT NULL,
    PRIMARY KEY (width, start, event_id)
);

-- The history so far: finished instants and first scheduled attempts per
-- event and hour, then per event and day.
CREATE TEMP TABLE punctuality_bounds (b bigint PRIMARY KEY);
INSERT INTO punctuality_bounds (b) VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9), (10), (11), (12), (13), (14), (15), (16), (18), (20), (22), (25), (28), (30), (35), (40), (45), (50), (60), (70), (75), (80), (90), (100), (110), (120), (130), (140), (150), (160), (180), (200), (220), (250), (280), (300), (350), (400), (450), (500), (600), (700), (750), (800), (900), (1000), (1100), (1200), (1300), (1400), (1500), (1600), (1800), (2000), (2200), (2500), (2800), (3000), (3500), (4000), (4500), (5000), (6000), (7000), (7500), (8000), (9000), (10000), (11000), (12000), (13000), (14000), (15000), (16000), (18000), (20000), (22000), (25000), (28000), (30000), (35000), (40000), (45000), (50000), (60000), (70000), (75000), (80000), (90000), (100000), (110000), (120000), (130000), (140000), (150000), (160000), (180000), (200000), (220000), (250000), (280000), (300000), (350000), (400000), (450000), (500000), (600000), (700000), (750000), (800000), (900000), (1000000), (1100000), (1200000), (1300000), (1400000), (1500000), (1600000), (1800000), (2000000), (2200000), (2500000), (2800000), (3000000), (3500000), (4000000), (4500000), (5000000), (6000000), (7000000), (7500000), (8000000), (9000000), (10000000), (11000000), (12000000), (13000000), (14000000), (15000000), (16000000), (18000000), (20000000), (22000000), (25000000), (28000000), (30000000), (35000000), (40000000), (45000000), (50000000), (60000000), (70000000), (75000000), (80000000), (90000000), (100000000), (110000000), (120000000), (130000000), (140000000), (150000000), (160000000), (180000000), (200000000), (220000000), (250000000), (280000000), (300000000), (350000000), (400000000), (450000000), (500000000), (600000000), (700000000), (750000000), (800000000), (900000000), (1000000000), (1100000000), (1200000000), (1300000000), (1400000000), (1500000000), (1600000000), (1800000000), (2000000000), (2200000000), (2500000000), (2800000000), (3000000000), (3500000000), (4000000000), (4500000000), (5000000000), (6000000000), (7000000000), (7500000000), (8000000000), (9000000000);
CREATE TEMP TABLE punctuality_finished AS
SELECT date_trunc('hour', scheduled_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS start, event_id,
    SUM(CASE WHEN status = 'completed' THEN 1 ELSE 0 END) AS completed,
    SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END) AS failed,
    SUM(CASE WHEN status = 'missed' THEN 1 ELSE 0 END) AS missed,
    SUM(CASE WHEN status = 'skipped' THEN 1 ELSE 0 END) AS skipped,
    SUM(CASE WHEN status = 'cancelled' THEN 1 ELSE 0 END) AS cancelled
FROM occurrences WHERE status IN ('completed', 'failed', 'missed', 'skipped', 'cancelled')
GROUP BY 1, 2;
CREATE TEMP TABLE punctuality_late AS
SELECT x.start, x.event_id, (SELECT MAX(b) FROM punctuality_bounds WHERE b <= x.ms) AS bucket, SUM(x.n) AS n
FROM (SELECT date_trunc('hour', scheduled_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS start, event_id, GREATEST(lateness_ms, 0) AS ms, COUNT(*) AS n
      FROM attempts WHERE attempt = 1 AND NOT manual GROUP BY 1, 2, 3) x
GROUP BY 1, 2, 3;
INSERT INTO punctuality_rollups (width, start, event_id, completed, failed, missed, skipped, cancelled, lateness)
SELECT 'h', k.start, k.event_id, COALESCE(f.completed, 0), COALESCE(f.failed, 0), COALESCE(f.missed, 0),
    COALESCE(f.skipped, 0), COALESCE(f.cancelled, 0), COALESCE(l.lateness, '')
FROM (SELECT start AS start, event_id FROM punctuality_finished
      UNION SELECT start, event_id FROM punctuality_late) k
LEFT JOIN (SELECT start AS start, event_id, SUM(completed) AS completed, SUM(failed) AS failed,
        SUM(missed) AS missed, SUM(skipped) AS skipped, SUM(cancelled) AS cancelled
    FROM punctuality_finished GROUP BY 1, 2) f ON f.start = k.start AND f.event_id = k.event_id
LEFT JOIN (SELECT start, event_id, string_agg(bucket || ':' || n, ',' ORDER BY bucket) AS lateness
    FROM (SELECT start AS start, event_id, bucket, SUM(n) AS n FROM punctuality_late GROUP BY 1, 2, 3) y
    GROUP BY 1, 2) l ON l.start = k.start AND l.event_id = k.event_id;
INSERT INTO punctuality_rollups (width, start, event_id, completed, failed, missed, skipped, cancelled, lateness)
SELECT 'd', k.start, k.event_id, COALESCE(f.completed, 0), COALESCE(f.failed, 0), COALESCE(f.missed, 0),
    COALESCE(f.skipped, 0), COALESCE(f.cancelled, 0), COALESCE(l.lateness, '')
FROM (SELECT date_trunc('day', start AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS start, event_id FROM punctuality_finished
      UNION SELECT date_trunc('day', start AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', event_id FROM punctuality_late) k
LEFT JOIN (SELECT date_trunc('day', start AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS start, event_id, SUM(completed) AS completed, SUM(failed) AS failed,
        SUM(missed) AS missed, SUM(skipped) AS skipped, SUM(cancelled) AS cancelled
    FROM punctuality_finished GROUP BY 1, 2) f ON f.start = k.start AND f.event_id = k.event_id
LEFT JOIN (SELECT start, event_id, string_agg(bucket || ':' || n, ',' ORDER BY bucket) AS lateness
    FROM (SELECT date_trunc('day', start AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS start, event_id, bucket, SUM(n) AS n FROM punctuality_late GROUP BY 1, 2, 3) y
    GROUP BY 1, 2) l ON l.start = k.start AND l.event_id = k.event_id;
DROP TABLE punctuality_late;
DROP TABLE punctuality_finished;
DROP TABLE punctuality_bounds;
ANALYZE punctuality_rollups;
