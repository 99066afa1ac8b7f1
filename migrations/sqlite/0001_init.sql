-- Events: what to fire and when. Soft-deleted rows keep their history.
CREATE TABLE events (
    id                         text PRIMARY KEY,
    name                       text        NOT NULL,
    description                text        NOT NULL DEFAULT '',
    start_time                 TIMESTAMP NOT NULL,
    timezone                   text        NOT NULL DEFAULT 'UTC',
    rrule                      text,
    schedule                   text,
    cron                       text,
    action_type                text        NOT NULL,
    action                     text        NOT NULL,
    webhook                    text        NOT NULL DEFAULT '',
    hmac_secret                BLOB,
    previous_secret            BLOB,
    previous_secret_expires_at TIMESTAMP,
    tags_json                  text        NOT NULL DEFAULT '[]',
    metadata                   text,
    retry                      text,
    catch_up                   text        NOT NULL DEFAULT 'all',
    timeout_ms                 INTEGER      NOT NULL DEFAULT 0,
    status                     text        NOT NULL,
    last_status                text        NOT NULL DEFAULT '',
    created_by                 text        NOT NULL DEFAULT '',
    created_via                text        NOT NULL DEFAULT 'api',
    version                    INTEGER      NOT NULL DEFAULT 1,
    expanded_until             TIMESTAMP,
    next_run_at                TIMESTAMP,
    last_run_at                TIMESTAMP,
    created_at                 TIMESTAMP NOT NULL,
    updated_at                 TIMESTAMP NOT NULL,
    deleted_at                 TIMESTAMP
);
-- Listing newest first, skipping deleted rows.
CREATE INDEX events_listing ON events (created_at DESC, id DESC) WHERE deleted_at IS NULL;
-- The expander's scan: active events whose cursor is behind the horizon.
CREATE INDEX events_expansion ON events (expanded_until) WHERE status = 'active';

-- One row per (event, tag) so "any of" and "all of" filters use an index.
CREATE TABLE event_tags (
    event_id text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    tag      text NOT NULL,
    PRIMARY KEY (event_id, tag)
);
CREATE INDEX event_tags_by_tag ON event_tags (tag, event_id);

CREATE TABLE occurrences (
    id               text PRIMARY KEY,
    event_id         text        NOT NULL REFERENCES events (id),
    scheduled_at     TIMESTAMP NOT NULL,
    status           text        NOT NULL,
    manual           INTEGER     NOT NULL DEFAULT 0,
    attempt_count    INTEGER     NOT NULL DEFAULT 0,
    next_attempt_at  TIMESTAMP NOT NULL,
    lease_token      text,
    lease_owner      text,
    lease_expires_at TIMESTAMP,
    status_code      INTEGER,
    response_body    text,
    error_message    text,
    started_at       TIMESTAMP,
    completed_at     TIMESTAMP,
    created_at       TIMESTAMP NOT NULL,
    updated_at       TIMESTAMP NOT NULL,
    CONSTRAINT occurrences_event_instant UNIQUE (event_id, scheduled_at)
);
-- The dispatcher's claim: only rows that can still fire are indexed.
CREATE INDEX occurrences_due ON occurrences (next_attempt_at) WHERE status IN ('pending', 'retrying');
-- The rescuer's scan of leases and acknowledgements that may have expired.
CREATE INDEX occurrences_leased ON occurrences (lease_expires_at) WHERE status IN ('dispatching', 'awaiting_ack');
CREATE INDEX occurrences_listing ON occurrences (scheduled_at DESC, id DESC);
CREATE INDEX occurrences_terminal ON occurrences (updated_at) WHERE status IN ('completed', 'failed', 'missed', 'cancelled');

CREATE TABLE attempts (
    id               text PRIMARY KEY,
    occurrence_id    text        NOT NULL REFERENCES occurrences (id),
    event_id         text        NOT NULL,
    attempt          INTEGER     NOT NULL,
    manual           INTEGER     NOT NULL DEFAULT 0,
    started_at       TIMESTAMP NOT NULL,
    duration_ms      INTEGER      NOT NULL,
    status_code      INTEGER,
    outcome          text        NOT NULL,
    error            text,
    response_excerpt text,
    truncated        INTEGER     NOT NULL DEFAULT 0,
    lateness_ms      INTEGER      NOT NULL DEFAULT 0
);
CREATE INDEX attempts_by_occurrence ON attempts (occurrence_id, attempt);
CREATE INDEX attempts_by_time ON attempts (started_at);

CREATE TABLE tokens (
    id         text PRIMARY KEY,
    subject    text        NOT NULL,
    access     text        NOT NULL,
    scope_json text        NOT NULL DEFAULT '[]',
    expires_at TIMESTAMP NOT NULL,
    revoked_at TIMESTAMP,
    created_by text        NOT NULL DEFAULT '',
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX tokens_listing ON tokens (created_at DESC, id DESC);

CREATE TABLE idempotency_keys (
    principal    text        NOT NULL,
    key          text        NOT NULL,
    request_hash text        NOT NULL,
    status_code  INTEGER     NOT NULL,
    body         BLOB       NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    expires_at   TIMESTAMP NOT NULL,
    PRIMARY KEY (principal, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

-- Archive tables: terminal history moved out of the hot tables by the archiver.
CREATE TABLE events_archive (
    id                         text,
    name                       text        NOT NULL,
    description                text        NOT NULL DEFAULT '',
    start_time                 TIMESTAMP NOT NULL,
    timezone                   text        NOT NULL DEFAULT 'UTC',
    rrule                      text,
    schedule                   text,
    cron                       text,
    action_type                text        NOT NULL,
    action                     text        NOT NULL,
    webhook                    text        NOT NULL DEFAULT '',
    hmac_secret                BLOB,
    previous_secret            BLOB,
    previous_secret_expires_at TIMESTAMP,
    tags_json                  text        NOT NULL DEFAULT '[]',
    metadata                   text,
    retry                      text,
    catch_up                   text        NOT NULL DEFAULT 'all',
    timeout_ms                 INTEGER      NOT NULL DEFAULT 0,
    status                     text        NOT NULL,
    last_status                text        NOT NULL DEFAULT '',
    created_by                 text        NOT NULL DEFAULT '',
    created_via                text        NOT NULL DEFAULT 'api',
    version                    INTEGER      NOT NULL DEFAULT 1,
    expanded_until             TIMESTAMP,
    next_run_at                TIMESTAMP,
    last_run_at                TIMESTAMP,
    created_at                 TIMESTAMP NOT NULL,
    updated_at                 TIMESTAMP NOT NULL,
    deleted_at                 TIMESTAMP,
    archived_at TIMESTAMP NOT NULL
);
CREATE TABLE occurrences_archive (
    id               text,
    event_id         text        NOT NULL,
    scheduled_at     TIMESTAMP NOT NULL,
    status           text        NOT NULL,
    manual           INTEGER     NOT NULL DEFAULT 0,
    attempt_count    INTEGER     NOT NULL DEFAULT 0,
    next_attempt_at  TIMESTAMP NOT NULL,
    lease_token      text,
    lease_owner      text,
    lease_expires_at TIMESTAMP,
    status_code      INTEGER,
    response_body    text,
    error_message    text,
    started_at       TIMESTAMP,
    completed_at     TIMESTAMP,
    created_at       TIMESTAMP NOT NULL,
    updated_at       TIMESTAMP NOT NULL,
    archived_at TIMESTAMP NOT NULL
);
CREATE TABLE attempts_archive (
    id               text,
    occurrence_id    text        NOT NULL,
    event_id         text        NOT NULL,
    attempt          INTEGER     NOT NULL,
    manual           INTEGER     NOT NULL DEFAULT 0,
    started_at       TIMESTAMP NOT NULL,
    duration_ms      INTEGER      NOT NULL,
    status_code      INTEGER,
    outcome          text        NOT NULL,
    error            text,
    response_excerpt text,
    truncated        INTEGER     NOT NULL DEFAULT 0,
    lateness_ms      INTEGER      NOT NULL DEFAULT 0,
    archived_at TIMESTAMP NOT NULL
);
CREATE INDEX occurrences_archive_listing ON occurrences_archive (scheduled_at DESC, id DESC);
CREATE INDEX occurrences_archive_event ON occurrences_archive (event_id, scheduled_at);
CREATE INDEX attempts_archive_by_occurrence ON attempts_archive (occurrence_id, attempt);
CREATE INDEX archive_purge_occurrences ON occurrences_archive (archived_at);
CREATE INDEX archive_purge_attempts ON attempts_archive (archived_at);
CREATE INDEX archive_purge_events ON events_archive (archived_at);
