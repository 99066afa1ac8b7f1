-- #39: portal links (see the PostgreSQL migration of the same number).
CREATE TABLE portal_links (
    id         text PRIMARY KEY,
    code_hash  text      NOT NULL UNIQUE,
    tags_json  text      NOT NULL,
    return_url text      NOT NULL DEFAULT '',
    expires_at TIMESTAMP NOT NULL,
    used_at    TIMESTAMP,
    created_by text      NOT NULL DEFAULT '',
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX portal_links_expiry ON portal_links (expires_at);
