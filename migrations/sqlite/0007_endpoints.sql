-- Endpoints: shared delivery targets with their own secret, limits, auth and
-- health (issue "Endpoints as a resource").

-- An endpoint's configuration. Secrets are AES-GCM ciphertext: the signing
-- secret (and, during a rotation's grace, the previous one) and the secret
-- half of its auth (a JSON document: password, client secret, private key).
CREATE TABLE endpoints (
    id                         text PRIMARY KEY,
    name                       text        NOT NULL,
    description                text        NOT NULL DEFAULT '',
    url                        text        NOT NULL,
    secret                     BLOB       NOT NULL,
    previous_secret            BLOB,
    previous_secret_expires_at TIMESTAMP,
    headers_json               text        NOT NULL DEFAULT '{}',
    rate_per_second            REAL,
    rate_burst                 INTEGER     NOT NULL DEFAULT 0,
    max_concurrency            INTEGER     NOT NULL DEFAULT 0,
    timeout_ms                 INTEGER      NOT NULL DEFAULT 0,
    auth_json                  text,
    auth_secret                BLOB,
    circuit_json               text,
    tags_json                  text        NOT NULL DEFAULT '[]',
    version                    INTEGER      NOT NULL DEFAULT 1,
    created_by                 text        NOT NULL DEFAULT '',
    created_at                 TIMESTAMP NOT NULL,
    updated_at                 TIMESTAMP NOT NULL,
    deleted_at                 TIMESTAMP
);
CREATE INDEX endpoints_listing ON endpoints (created_at DESC, id DESC) WHERE deleted_at IS NULL;

-- An endpoint's health and circuit, shared by every instance. It changes
-- with deliveries, so it lives apart from the versioned configuration.
CREATE TABLE endpoint_health (
    endpoint_id          text PRIMARY KEY REFERENCES endpoints (id),
    state                text        NOT NULL DEFAULT 'healthy',
    state_changed_at     TIMESTAMP NOT NULL,
    disabled_reason      text        NOT NULL DEFAULT '',
    opened_at            TIMESTAMP,
    cool_down_until      TIMESTAMP,
    trial_token          text,
    trial_until          TIMESTAMP,
    consecutive_failures INTEGER     NOT NULL DEFAULT 0,
    window_start         TIMESTAMP,
    window_total         INTEGER     NOT NULL DEFAULT 0,
    window_failures      INTEGER     NOT NULL DEFAULT 0,
    last_error           text        NOT NULL DEFAULT '',
    last_error_at        TIMESTAMP,
    last_success_at      TIMESTAMP,
    updated_at           TIMESTAMP NOT NULL
);
-- The disabler's scan: circuits open for a long time.
CREATE INDEX endpoint_health_open ON endpoint_health (opened_at) WHERE state = 'open';

-- Which endpoint an event's action names (NULL for inline URLs).
ALTER TABLE events ADD COLUMN endpoint_id text REFERENCES endpoints (id);
ALTER TABLE events_archive ADD COLUMN endpoint_id text;
CREATE INDEX events_by_endpoint ON events (endpoint_id) WHERE endpoint_id IS NOT NULL;

-- Which endpoint an attempt went to: the endpoint's success ratio, latency
-- and last error are read from its recent attempts.
ALTER TABLE attempts ADD COLUMN endpoint_id text;
ALTER TABLE attempts_archive ADD COLUMN endpoint_id text;
CREATE INDEX attempts_by_endpoint ON attempts (endpoint_id, started_at) WHERE endpoint_id IS NOT NULL;
