-- #39: fan-out (see the PostgreSQL migration of the same number): an
-- event's topic, an occurrence's fan-out document, an attempt's
-- subscription.
ALTER TABLE events ADD COLUMN topic TEXT;
ALTER TABLE events_archive ADD COLUMN topic TEXT;
CREATE INDEX events_by_topic ON events (topic) WHERE topic IS NOT NULL;
ALTER TABLE occurrences ADD COLUMN fanout_json TEXT;
ALTER TABLE occurrences_archive ADD COLUMN fanout_json TEXT;
ALTER TABLE attempts ADD COLUMN subscription_id TEXT;
ALTER TABLE attempts_archive ADD COLUMN subscription_id TEXT;
CREATE INDEX attempts_by_subscription ON attempts (subscription_id, started_at) WHERE subscription_id IS NOT NULL;
