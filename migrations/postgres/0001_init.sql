-- Events: what to fire and when. Soft-deleted rows keep their history.
CREATE TABLE events (
    id                         uuid PRIMARY KEY,
    name                       text        NOT NULL,
    description                text        NOT NULL DEFAULT '',
    start_time                 timestamptz NOT NULL,
    timezone                   text        NOT NULL DEFAULT 'UTC',
    rrule                      text,
    schedule                   text,
    cron                       text,
    action_type                text        NOT NULL,
    action                     text        NOT NULL,
    webhook                    text        NOT NULL DEFAULT '',
    hmac_secret                bytea,
    previous_secret            bytea,
    previous_secret_expires_at timestamptz,
    tags_json                  text        NOT NULL DEFAULT '[]',
    metadata                   text,
    retry                      text,
    catch_up                   text        NOT NULL DEFAULT 'all',
    timeout_ms                 bigint      NOT NULL DEFAULT 0,
    status                     text        NOT NULL,
    last_status                text        NOT NULL DEFAULT '',
    created_by                 text        NOT NULL DEFAULT '',
    created_via                text        NOT NULL DEFAULT 'api',
    version                    bigint      NOT NULL DEFAULT 1,
    expanded_until             timestamptz,
    next_run_at                timestamptz,
    last_run_at                timestamptz,
    created_at                 timestamptz NOT NULL,
    updated_at                 timestamptz NOT NULL,
    deleted_at                 timestamptz
);
-- Listing newest first, skipping deleted rows.
CREATE INDEX events_listing ON events (created_at DESC, id DESC) WHERE deleted_at IS NULL;
-- The expander's scan: active events whose cursor is behind the horizon.
CREATE INDEX events_expansion ON events (expanded_until) WHERE status = 'active';

-- One row per (event, tag) so "any of" and "all of" filters use an index.
CREATE TABLE event_tags (
    event_id uuid NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    tag      text NOT NULL,
    PRIMARY KEY (event_id, tag)
);
CREATE INDEX event_tags_by_tag ON event_tags (tag, event_id);

CREATE TABLE occurrences (
    id               uuid PRIMARY KEY,
    event_id         uuid        NOT NULL REFERENCES events (id),
    scheduled_at     timestamptz NOT NULL,
    status           text        NOT NULL,
    manual           boolean     NOT NULL DEFAULT false,
    attempt_count    integer     NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL,
    lease_token      text,
    lease_owner      text,
    lease_expires_at timestamptz,
    status_code      integer,
    response_body    text,
    error_message    text,
    started_at       timestamptz,
    completed_at     timestamptz,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    CONSTRAINT occurrences_event_instant UNIQUE (event_id, scheduled_at)
);
-- The dispatcher's claim: only rows that can still fire are indexed.
CREATE INDEX occurrences_due ON occurrences (next_attempt_at) WHERE status IN ('pending', 'retrying');
-- The rescuer's scan of leases and acknowledgements that may have expired.
CREATE INDEX occurrences_leased ON occurrences (lease_expires_at) WHERE status IN ('dispatching', 'awaiting_ack');
CREATE INDEX occurrences_listing ON occurrences (scheduled_at DESC, id DESC);
CREATE INDEX occurrences_terminal ON occurrences (updated_at) WHERE status IN ('completed', 'failed', 'missed', 'cancelled');

CREATE TABLE attempts (
    id               uuid PRIMARY KEY,
    occurrence_id    uuid        NOT NULL REFERENCES occurrences (id),
    event_id         uuid        NOT NULL,
    attempt          integer     NOT NULL,
    manual           boolean     NOT NULL DEFAULT false,
    started_at       timestamptz NOT NULL,
    duration_ms      bigint      NOT NULL,
    status_code      integer,
    outcome          text        NOT NULL,
    error            text,
    response_excerpt text,
    truncated        boolean     NOT NULL DEFAULT false,
    lateness_ms      bigint      NOT NULL DEFAULT 0
);
CREATE INDEX attempts_by_occurrence ON attempts (occurrence_id, attempt);
CREATE INDEX attempts_by_time ON attempts (started_at);

CREATE TABLE tokens (
    id         text PRIMARY KEY,
    subject    text        NOT NULL,
    access     text        NOT NULL,
    scope_json text        NOT NULL DEFAULT '[]',
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz,
    created_by text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL
);
CREATE INDEX tokens_listing ON tokens (created_at DESC, id DESC);

CREATE TABLE idempotency_keys (
    principal    text        NOT NULL,
    key          text        NOT NULL,
    request_hash text        NOT NULL,
    status_code  integer     NOT NULL,
    body         bytea       NOT NULL,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    PRIMARY KEY (principal, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

-- Archive tables: terminal history moved out of the hot tables by the archiver.
CREATE TABLE events_archive      (LIKE events, archived_at timestamptz NOT NULL);
CREATE TABLE occurrences_archive (LIKE occurrences, archived_at timestamptz NOT NULL);
CREATE TABLE attempts_archive    (LIKE attempts, archived_at timestamptz NOT NULL);
CREATE INDEX occurrences_archive_listing ON occurrences_archive (scheduled_at DESC, id DESC);
CREATE INDEX occurrences_archive_event ON occurrences_archive (event_id, scheduled_at);
CREATE INDEX attempts_archive_by_occurrence ON attempts_archive (occurrence_id, attempt);
CREATE INDEX archive_purge_occurrences ON occurrences_archive (archived_at);
CREATE INDEX archive_purge_attempts ON attempts_archive (archived_at);
CREATE INDEX archive_purge_events ON events_archive (archived_at);
