-- #36: a one-time event's punctuality goes to punctuality_once, one plain
-- row a change (usually its one delivery), never merged: a row with no key
-- to probe and one index entry, where the row of width 'o' in
-- punctuality_rollups was an upsert on its primary key (3–4 µs more a
-- delivery timed alone; BENCHMARKS.md, forty-second step). Such an event
-- has one instant, so there is nothing to merge: the rows of an event and
-- hour are summed by the report, which reads them by start like the fresh
-- rows. Several rows of one event and hour are rare (an ended instant
-- replayed, an event rescheduled within its hour) and each carries its own
-- change (-1 failed, +1 completed).
--
-- The report still reads rows of width 'o' from punctuality_rollups: the
-- ones moved here and, during a rolling upgrade, those an instance of the
-- previous version writes.
--
-- The fresh rows' columns (PostgreSQL's punctuality_fresh has no width).
CREATE TABLE punctuality_once (LIKE punctuality_fresh);
CREATE INDEX punctuality_once_start ON punctuality_once (start);

WITH moved AS (DELETE FROM punctuality_rollups WHERE width = 'o'
    RETURNING start, event_id, completed, failed, missed, skipped, cancelled, lateness)
INSERT INTO punctuality_once SELECT * FROM moved;

COMMENT ON COLUMN punctuality_rollups.width IS
    'h: an event''s hour; d: its UTC day; o: a one-time event''s hour written by a version before 0039';
