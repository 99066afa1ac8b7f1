-- Console sessions signed out before they expired: a sealed session cookie
-- whose id is here no longer signs anyone in, on any instance. Rows are
-- dropped once the session would have expired anyway.
CREATE TABLE console_revoked_sessions (
    id         text PRIMARY KEY,
    expires_at TIMESTAMP NOT NULL
);
CREATE INDEX console_revoked_sessions_expiry ON console_revoked_sessions (expires_at);
