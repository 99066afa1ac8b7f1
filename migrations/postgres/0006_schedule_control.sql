-- Calendar-grade control: a ledger with reasons, moves, pause until, time
-- policy, exceptions, calendars and the audit log.

-- Why a row is skipped, missed or cancelled; where a moved or rolled row
-- was planned before.
ALTER TABLE occurrences ADD COLUMN reason text;
ALTER TABLE occurrences ADD COLUMN original_scheduled_at timestamptz;
ALTER TABLE occurrences_archive ADD COLUMN reason text;
ALTER TABLE occurrences_archive ADD COLUMN original_scheduled_at timestamptz;
DROP INDEX occurrences_terminal;
CREATE INDEX occurrences_terminal ON occurrences (updated_at)
    WHERE status IN ('completed', 'failed', 'missed', 'cancelled', 'skipped');

-- Pause until, with who and why; the event's time policy and calendars.
ALTER TABLE events ADD COLUMN paused_at timestamptz;
ALTER TABLE events ADD COLUMN paused_until timestamptz;
ALTER TABLE events ADD COLUMN pause_reason text NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN paused_by text NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN pause_catch_up text NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN dst text;
ALTER TABLE events ADD COLUMN jitter_ms bigint NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN calendars text;
ALTER TABLE events_archive ADD COLUMN paused_at timestamptz;
ALTER TABLE events_archive ADD COLUMN paused_until timestamptz;
ALTER TABLE events_archive ADD COLUMN pause_reason text NOT NULL DEFAULT '';
ALTER TABLE events_archive ADD COLUMN paused_by text NOT NULL DEFAULT '';
ALTER TABLE events_archive ADD COLUMN pause_catch_up text NOT NULL DEFAULT '';
ALTER TABLE events_archive ADD COLUMN dst text;
ALTER TABLE events_archive ADD COLUMN jitter_ms bigint NOT NULL DEFAULT 0;
ALTER TABLE events_archive ADD COLUMN calendars text;
-- The resumer's scan: paused events whose pause ends.
CREATE INDEX events_pause_ends ON events (paused_until) WHERE status = 'paused' AND paused_until IS NOT NULL;

-- Per-instant exceptions of an event, keyed by the planned instant.
CREATE TABLE event_exceptions (
    event_id   uuid        NOT NULL REFERENCES events (id),
    at         timestamptz NOT NULL,
    action     text        NOT NULL,
    to_at      timestamptz,
    reason     text        NOT NULL DEFAULT '',
    created_by text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    PRIMARY KEY (event_id, at)
);
CREATE TABLE event_exceptions_archive (LIKE event_exceptions, archived_at timestamptz NOT NULL);
CREATE INDEX event_exceptions_archive_event ON event_exceptions_archive (event_id, at);

-- Exclusion calendars, shared by events.
CREATE TABLE calendars (
    id          uuid PRIMARY KEY,
    name        text        NOT NULL,
    timezone    text        NOT NULL DEFAULT 'UTC',
    dates_json  text        NOT NULL DEFAULT '[]',
    ranges_json text        NOT NULL DEFAULT '[]',
    rrules_json text        NOT NULL DEFAULT '[]',
    tags_json   text        NOT NULL DEFAULT '[]',
    version     bigint      NOT NULL DEFAULT 1,
    created_by  text        NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    -- Set when an edit must re-plan the events that use the calendar; the
    -- re-planner clears it once every event is done.
    replan_requested_at timestamptz
);
CREATE INDEX calendars_listing ON calendars (created_at DESC, id DESC);
CREATE INDEX calendars_replan ON calendars (replan_requested_at) WHERE replan_requested_at IS NOT NULL;
-- Which events use a calendar (the event's own list is events.calendars).
CREATE TABLE event_calendars (
    event_id    uuid NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    calendar_id uuid NOT NULL REFERENCES calendars (id),
    PRIMARY KEY (event_id, calendar_id)
);
CREATE INDEX event_calendars_by_calendar ON event_calendars (calendar_id, event_id);

-- The audit log: who changed what on an event, and when.
CREATE TABLE event_history (
    id       uuid PRIMARY KEY,
    event_id uuid        NOT NULL,
    at       timestamptz NOT NULL,
    subject  text        NOT NULL DEFAULT '',
    channel  text        NOT NULL DEFAULT 'api',
    action   text        NOT NULL,
    reason   text        NOT NULL DEFAULT '',
    changes  text
);
CREATE INDEX event_history_by_event ON event_history (event_id, at, id);
CREATE TABLE event_history_archive (LIKE event_history, archived_at timestamptz NOT NULL);
CREATE INDEX event_history_archive_event ON event_history_archive (event_id, at, id);
