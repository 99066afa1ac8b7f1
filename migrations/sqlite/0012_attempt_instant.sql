-- #24: an attempt carries its occurrence's instant. On PostgreSQL it is the
-- partition key that keeps an occurrence and its attempts in one time slice;
-- SQLite keeps plain tables and the column only keeps both schemas alike.
-- (SQLite's retention gives disk back by auto_vacuum=INCREMENTAL, switched at
-- open: a migration runs inside a transaction, where VACUUM cannot.)
ALTER TABLE attempts ADD COLUMN scheduled_at TIMESTAMP;
UPDATE attempts SET scheduled_at = (SELECT o.scheduled_at FROM occurrences o WHERE o.id = attempts.occurrence_id);
ALTER TABLE attempts_archive ADD COLUMN scheduled_at TIMESTAMP;
UPDATE attempts_archive SET scheduled_at = COALESCE(
    (SELECT o.scheduled_at FROM occurrences_archive o WHERE o.id = attempts_archive.occurrence_id),
    strftime('%Y-%m-%dT%H:%M:%f000Z', started_at, '-' || (lateness_ms / 1000.0) || ' seconds'));
