-- #39: fan-out. An event may target a topic instead of an action: its
-- action is stored as {"type": "topic", "params": {"topic": …}}, and the
-- topic's name is kept in its own column (as endpoint_id is) to find the
-- events that target a topic. An occurrence of such an event keeps its
-- fan-out in one JSON document written with its outcome (the counts, the
-- subscriptions filtered out, the deliveries still to retry); each delivery
-- attempt names its subscription. Nullable columns without defaults change
-- only the catalog: no table rewrite, and the partitioned parents pass them
-- to every slice.
ALTER TABLE events ADD COLUMN topic text;
ALTER TABLE events_archive ADD COLUMN topic text;
CREATE INDEX events_by_topic ON events (topic) WHERE topic IS NOT NULL;
ALTER TABLE occurrences ADD COLUMN fanout_json text;
ALTER TABLE occurrences_archive ADD COLUMN fanout_json text;
ALTER TABLE attempts ADD COLUMN subscription_id uuid;
ALTER TABLE attempts_archive ADD COLUMN subscription_id uuid;
CREATE INDEX attempts_by_subscription ON attempts (subscription_id, started_at) WHERE subscription_id IS NOT NULL;
