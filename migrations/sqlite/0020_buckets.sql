-- #36: work is owned by buckets (see the PostgreSQL migration of the same
-- number). The bucket is the low ten bits of the event id's last three hex
-- digits, a virtual generated column (SQLite adds only those by ALTER TABLE):
-- computed on read, indexable, never out of step with the id.
ALTER TABLE events ADD COLUMN bucket INTEGER GENERATED ALWAYS AS (
    ((instr('0123456789abcdef', lower(substr(id, -3, 1))) - 1) * 256 +
     (instr('0123456789abcdef', lower(substr(id, -2, 1))) - 1) * 16 +
     (instr('0123456789abcdef', lower(substr(id, -1, 1))) - 1)) & 1023) VIRTUAL;
ALTER TABLE events_archive ADD COLUMN bucket INTEGER GENERATED ALWAYS AS (
    ((instr('0123456789abcdef', lower(substr(id, -3, 1))) - 1) * 256 +
     (instr('0123456789abcdef', lower(substr(id, -2, 1))) - 1) * 16 +
     (instr('0123456789abcdef', lower(substr(id, -1, 1))) - 1)) & 1023) VIRTUAL;
ALTER TABLE occurrences ADD COLUMN bucket INTEGER GENERATED ALWAYS AS (
    ((instr('0123456789abcdef', lower(substr(event_id, -3, 1))) - 1) * 256 +
     (instr('0123456789abcdef', lower(substr(event_id, -2, 1))) - 1) * 16 +
     (instr('0123456789abcdef', lower(substr(event_id, -1, 1))) - 1)) & 1023) VIRTUAL;
ALTER TABLE occurrences_archive ADD COLUMN bucket INTEGER GENERATED ALWAYS AS (
    ((instr('0123456789abcdef', lower(substr(event_id, -3, 1))) - 1) * 256 +
     (instr('0123456789abcdef', lower(substr(event_id, -2, 1))) - 1) * 16 +
     (instr('0123456789abcdef', lower(substr(event_id, -1, 1))) - 1)) & 1023) VIRTUAL;
ALTER TABLE attempts ADD COLUMN bucket INTEGER GENERATED ALWAYS AS (
    ((instr('0123456789abcdef', lower(substr(event_id, -3, 1))) - 1) * 256 +
     (instr('0123456789abcdef', lower(substr(event_id, -2, 1))) - 1) * 16 +
     (instr('0123456789abcdef', lower(substr(event_id, -1, 1))) - 1)) & 1023) VIRTUAL;
ALTER TABLE attempts_archive ADD COLUMN bucket INTEGER GENERATED ALWAYS AS (
    ((instr('0123456789abcdef', lower(substr(event_id, -3, 1))) - 1) * 256 +
     (instr('0123456789abcdef', lower(substr(event_id, -2, 1))) - 1) * 16 +
     (instr('0123456789abcdef', lower(substr(event_id, -1, 1))) - 1)) & 1023) VIRTUAL;

CREATE TABLE dispatch_members (
    instance_id TEXT PRIMARY KEY,
    started_at  TIMESTAMP NOT NULL,
    expires_at  TIMESTAMP NOT NULL
);

CREATE TABLE bucket_slots (
    slot       INTEGER PRIMARY KEY,
    owner      TEXT,
    epoch      INTEGER NOT NULL DEFAULT 0,
    expires_at TIMESTAMP
);
WITH RECURSIVE s(slot) AS (SELECT 0 UNION ALL SELECT slot + 1 FROM s WHERE slot < 63)
INSERT INTO bucket_slots (slot) SELECT slot FROM s;
