-- The events that target a topic, or name an endpoint, newest first
-- (GET /events?topic=… and ?endpoint_id=…, the topic's console page): the
-- equality and the listing's order in one index, so that even a generic
-- plan of the cached statement reads only those events, never the whole
-- listing. They serve the delete checks of topics and endpoints too, which
-- the single-column indexes served.
CREATE INDEX events_topic_listing ON events (topic, created_at DESC, id DESC) WHERE topic IS NOT NULL;
DROP INDEX events_by_topic;
CREATE INDEX events_endpoint_listing ON events (endpoint_id, created_at DESC, id DESC) WHERE endpoint_id IS NOT NULL;
DROP INDEX events_by_endpoint;
