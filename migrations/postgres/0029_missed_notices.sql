-- #37: `missed` notices and channels scoped by tags.
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
