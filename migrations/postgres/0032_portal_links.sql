-- #39: portal links. POST /portal-links makes a one-time sign-in link for a
-- reduced console limited to some tags; only the SHA-256 of its code is
-- kept, so the table (a backup, a replica) never holds a usable link. The
-- code is used once: redeeming sets used_at in the statement that checks
-- it was unset. Rows go once they expired (the next link made drops them).
CREATE TABLE portal_links (
    id         uuid PRIMARY KEY,
    code_hash  text        NOT NULL UNIQUE,
    tags_json  text        NOT NULL,
    return_url text        NOT NULL DEFAULT '',
    expires_at timestamptz NOT NULL,
    used_at    timestamptz,
    created_by text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL
);
CREATE INDEX portal_links_expiry ON portal_links (expires_at);
