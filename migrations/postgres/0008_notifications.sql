-- Notifications to operators: channels managed through the API (channels
-- from the configuration live only there) and the scanner's cursors.

-- A channel: a signed webhook to an operator URL or an email to a list of
-- addresses. The webhook's signing secret is AES-GCM ciphertext.
CREATE TABLE notification_channels (
    id         uuid PRIMARY KEY,
    name       text        NOT NULL,
    type       text        NOT NULL,
    url        text        NOT NULL DEFAULT '',
    secret     bytea,
    to_json    text        NOT NULL DEFAULT '[]',
    kinds_json text        NOT NULL DEFAULT '[]',
    created_by text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX notification_channels_name ON notification_channels (name);

-- How far the notification scanner has read a source (failed occurrences,
-- ended series): rows up to (at, last_id) in (updated_at, id) order are
-- reported, so a restart or a new leader neither repeats nor skips them.
CREATE TABLE notification_cursors (
    name       text PRIMARY KEY,
    at         timestamptz NOT NULL,
    last_id    text        NOT NULL DEFAULT '',
    updated_at timestamptz NOT NULL
);

-- The scanner reads failed occurrences and ended events by when they
-- changed. Failed occurrences are found through occurrences_terminal
-- (updated_at, for every terminal state): one more index on the row every
-- outcome rewrites would cost each delivery.
CREATE INDEX events_inactive_changed ON events (updated_at, id) WHERE status = 'inactive';
