-- #37: `missed` notices, channels scoped by tags, and the reason a row had
-- before it waited for a concurrency key.
--
-- A notification channel may name tags: it then takes only the notices
-- about events and endpoints that carry one of them.
ALTER TABLE notification_channels ADD COLUMN tags_json text NOT NULL DEFAULT '[]';

-- One row per event whose instants did not fire and whose operators were
-- told (the `missed` notice): a dead man's switch says it once per outage.
-- recovered_at is the first instant after last_at that fired: unfired
-- instants before it belong to the outage already told, later ones open a
-- new one. The row goes when the event is paused, ends or is deleted.
CREATE TABLE missed_alerts (
    event_id     uuid PRIMARY KEY,
    first_at     timestamptz NOT NULL,
    last_at      timestamptz NOT NULL,
    instants     bigint      NOT NULL,
    notified_at  timestamptz NOT NULL,
    recovered_at timestamptz
);

-- The reason an occurrence carried (backfill, or a replayed row's) when it
-- started waiting for a slot of its concurrency key: waiting rows say
-- concurrency_wait, and taking the slot gives the old reason back.
CREATE TABLE concurrency_waits (
    occurrence_id uuid PRIMARY KEY,
    reason        text NOT NULL
);
