-- #37: `missed` notices, channels scoped by tags, the reason a row had before
-- it waited for a concurrency key (see the PostgreSQL migration of the same
-- number).
ALTER TABLE notification_channels ADD COLUMN tags_json text NOT NULL DEFAULT '[]';

CREATE TABLE missed_alerts (
    event_id     text PRIMARY KEY,
    first_at     TIMESTAMP NOT NULL,
    last_at      TIMESTAMP NOT NULL,
    instants     INTEGER   NOT NULL,
    notified_at  TIMESTAMP NOT NULL,
    recovered_at TIMESTAMP
);

CREATE TABLE concurrency_waits (
    occurrence_id text PRIMARY KEY,
    reason        text NOT NULL
);
