-- #36: a one-time event's punctuality goes to punctuality_once, one plain
-- row a change, never merged (see the PostgreSQL migration of the same
-- number). Its rows of width 'o', folded or still fresh, move there.
CREATE TABLE punctuality_once (
    start      TIMESTAMP NOT NULL,
    event_id   TEXT NOT NULL,
    completed  INTEGER NOT NULL,
    failed     INTEGER NOT NULL,
    missed     INTEGER NOT NULL,
    skipped    INTEGER NOT NULL,
    cancelled  INTEGER NOT NULL,
    lateness   TEXT   NOT NULL
);
CREATE INDEX punctuality_once_start ON punctuality_once (start);

INSERT INTO punctuality_once (start, event_id, completed, failed, missed, skipped, cancelled, lateness)
SELECT start, event_id, completed, failed, missed, skipped, cancelled, lateness FROM punctuality_rollups
WHERE width = 'o';
DELETE FROM punctuality_rollups WHERE width = 'o';
INSERT INTO punctuality_once (start, event_id, completed, failed, missed, skipped, cancelled, lateness)
SELECT start, event_id, completed, failed, missed, skipped, cancelled, lateness FROM punctuality_fresh
WHERE width = 'o';
DELETE FROM punctuality_fresh WHERE width = 'o';
