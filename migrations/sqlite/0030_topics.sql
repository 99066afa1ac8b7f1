-- #39: topics and subscriptions (see the PostgreSQL migration of the same
-- number).
CREATE TABLE topics (
    name        text PRIMARY KEY,
    description text      NOT NULL DEFAULT '',
    schema_json text,
    version     INTEGER   NOT NULL DEFAULT 1,
    created_by  text      NOT NULL DEFAULT '',
    created_at  TIMESTAMP NOT NULL,
    updated_at  TIMESTAMP NOT NULL
);

CREATE TABLE subscriptions (
    id          text PRIMARY KEY,
    topic       text      NOT NULL,
    endpoint_id text      NOT NULL,
    filter      text      NOT NULL DEFAULT '',
    description text      NOT NULL DEFAULT '',
    tags_json   text      NOT NULL DEFAULT '[]',
    paused      INTEGER   NOT NULL DEFAULT 0,
    version     INTEGER   NOT NULL DEFAULT 1,
    created_by  text      NOT NULL DEFAULT '',
    created_at  TIMESTAMP NOT NULL,
    updated_at  TIMESTAMP NOT NULL
);
CREATE INDEX subscriptions_listing ON subscriptions (created_at DESC, id DESC);
CREATE INDEX subscriptions_topic ON subscriptions (topic);
CREATE INDEX subscriptions_endpoint ON subscriptions (endpoint_id);
