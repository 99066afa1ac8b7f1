-- #38: each attempt keeps the request it sent, secrets redacted, as one JSON
-- document (see the PostgreSQL migration of the same number); NULL when
-- recording was off or the attempt predates this migration.
ALTER TABLE attempts ADD COLUMN request_json TEXT;
ALTER TABLE attempts_archive ADD COLUMN request_json TEXT;
