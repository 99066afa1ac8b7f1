-- #37: runs that report back (see the PostgreSQL migration of the same
-- number): the event's completion mode and max runtime, the run's report
-- and heartbeat, and the status-predicated indexes with the new states.
ALTER TABLE events ADD COLUMN completion text NOT NULL DEFAULT 'response';
ALTER TABLE events ADD COLUMN max_runtime_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events_archive ADD COLUMN completion text NOT NULL DEFAULT 'response';
ALTER TABLE events_archive ADD COLUMN max_runtime_ms INTEGER NOT NULL DEFAULT 0;

ALTER TABLE occurrences ADD COLUMN run_status text;
ALTER TABLE occurrences ADD COLUMN run_output text;
ALTER TABLE occurrences ADD COLUMN run_reported_at TIMESTAMP;
ALTER TABLE occurrences ADD COLUMN heartbeat_at TIMESTAMP;
ALTER TABLE occurrences_archive ADD COLUMN run_status text;
ALTER TABLE occurrences_archive ADD COLUMN run_output text;
ALTER TABLE occurrences_archive ADD COLUMN run_reported_at TIMESTAMP;
ALTER TABLE occurrences_archive ADD COLUMN heartbeat_at TIMESTAMP;

DROP INDEX occurrences_leased;
CREATE INDEX occurrences_leased ON occurrences (lease_expires_at)
    WHERE status IN ('dispatching', 'awaiting_ack', 'running');
DROP INDEX occurrences_terminal;
CREATE INDEX occurrences_terminal ON occurrences (updated_at)
    WHERE status IN ('completed', 'failed', 'missed', 'cancelled', 'skipped', 'timed_out');
DROP INDEX occurrences_ended_listing;
CREATE INDEX occurrences_ended_listing ON occurrences (status, scheduled_at DESC, id DESC)
    WHERE status IN ('failed', 'missed', 'cancelled', 'skipped', 'timed_out');
