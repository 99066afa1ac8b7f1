-- #39: topics and subscriptions.
--
-- A topic is an entry of the catalogue of what can fire; its schema (JSON
-- Schema text, NULL for none) is what the metadata of the events that
-- target it follows.
CREATE TABLE topics (
    name        text PRIMARY KEY,
    description text        NOT NULL DEFAULT '',
    schema_json text,
    version     bigint      NOT NULL DEFAULT 1,
    created_by  text        NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL
);

-- A subscription names a topic or a pattern of names (segments of *), an
-- endpoint, a CEL filter ('' for every firing) and its tags (scope, as an
-- endpoint's).
CREATE TABLE subscriptions (
    id          uuid PRIMARY KEY,
    topic       text        NOT NULL,
    endpoint_id uuid        NOT NULL,
    filter      text        NOT NULL DEFAULT '',
    description text        NOT NULL DEFAULT '',
    tags_json   text        NOT NULL DEFAULT '[]',
    paused      boolean     NOT NULL DEFAULT false,
    version     bigint      NOT NULL DEFAULT 1,
    created_by  text        NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL
);
CREATE INDEX subscriptions_listing ON subscriptions (created_at DESC, id DESC);
CREATE INDEX subscriptions_topic ON subscriptions (topic);
CREATE INDEX subscriptions_endpoint ON subscriptions (endpoint_id);
