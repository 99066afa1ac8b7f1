-- #37: concurrency keys (see the PostgreSQL migration of the same number).
ALTER TABLE events ADD COLUMN concurrency_key text;
ALTER TABLE events ADD COLUMN concurrency_limit INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events_archive ADD COLUMN concurrency_key text;
ALTER TABLE events_archive ADD COLUMN concurrency_limit INTEGER NOT NULL DEFAULT 0;
CREATE INDEX events_concurrency_key ON events (concurrency_key) WHERE concurrency_key IS NOT NULL;

CREATE TABLE concurrency_keys (
    key        text PRIMARY KEY,
    paused     INTEGER   NOT NULL DEFAULT 0,
    paused_at  TIMESTAMP,
    paused_by  text,
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE concurrency_slots (
    occurrence_id text      PRIMARY KEY,
    key           text      NOT NULL REFERENCES concurrency_keys (key),
    event_id      text      NOT NULL,
    scheduled_at  TIMESTAMP NOT NULL,
    acquired_at   TIMESTAMP NOT NULL
);
CREATE INDEX concurrency_slots_key ON concurrency_slots (key);

CREATE INDEX occurrences_concurrency_wait ON occurrences (scheduled_at, id)
    WHERE reason = 'concurrency_wait' AND status = 'pending';
