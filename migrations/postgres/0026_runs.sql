-- #37: runs that report back. An event with completion 'callback' stays
-- 'running' after its receiver accepted the delivery, until the receiver
-- completes it (POST /occurrences/{id}/complete), or it ends 'timed_out'
-- when neither a completion nor a heartbeat came within max_runtime
-- (0: the default, one hour). The deadline of a running row is its
-- lease_expires_at, as an unacknowledged delivery's.
--
-- A constant default is a catalogue change only: no row is rewritten.
-- The archive tables get the same columns in the same order (a week's
-- partition moves between occurrences and occurrences_archive; events
-- and events_archive share one column list).
ALTER TABLE events ADD COLUMN completion text NOT NULL DEFAULT 'response',
    ADD COLUMN max_runtime_ms bigint NOT NULL DEFAULT 0;
ALTER TABLE events_archive ADD COLUMN completion text NOT NULL DEFAULT 'response',
    ADD COLUMN max_runtime_ms bigint NOT NULL DEFAULT 0;

-- What the receiver reported (succeeded | failed), its output (JSON, at most
-- 16 KB), when, and its last heartbeat. A report that arrives while the
-- delivery is still in flight (the receiver called back before the
-- dispatcher recorded its 2xx) is kept here and decides the row when the
-- outcome is written, as acked_at does for an early acknowledgement.
ALTER TABLE occurrences ADD COLUMN run_status text, ADD COLUMN run_output text,
    ADD COLUMN run_reported_at timestamptz, ADD COLUMN heartbeat_at timestamptz;
ALTER TABLE occurrences_archive ADD COLUMN run_status text, ADD COLUMN run_output text,
    ADD COLUMN run_reported_at timestamptz, ADD COLUMN heartbeat_at timestamptz;

-- The status-predicated indexes learn the new states: running rows are held
-- (their deadline is read by the rescuer), timed_out ones are finished.
-- Each is built under a new name before the old one goes (see 0025).
CREATE INDEX occurrences_leased_runs ON occurrences (lease_expires_at)
    WHERE status IN ('dispatching', 'awaiting_ack', 'running');
DROP INDEX occurrences_leased;
ALTER INDEX occurrences_leased_runs RENAME TO occurrences_leased;

CREATE INDEX occurrences_terminal_runs ON occurrences (updated_at)
    WHERE status IN ('completed', 'failed', 'missed', 'cancelled', 'skipped', 'timed_out');
DROP INDEX occurrences_terminal;
ALTER INDEX occurrences_terminal_runs RENAME TO occurrences_terminal;

CREATE INDEX occurrences_ended_listing_runs ON occurrences (status, scheduled_at DESC, id DESC)
    WHERE status IN ('failed', 'missed', 'cancelled', 'skipped', 'timed_out');
DROP INDEX occurrences_ended_listing;
ALTER INDEX occurrences_ended_listing_runs RENAME TO occurrences_ended_listing;
