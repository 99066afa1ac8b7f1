-- #37: concurrency keys. An event may name a key and a limit: at most
-- that many occurrences of all the events naming the key are in flight at
-- once, installation-wide; the others wait, oldest instant first.
--
-- A key's limit is the smallest its active events name (read through
-- events_concurrency_key). An occurrence that may fire takes a slot
-- (concurrency_slots, one row per occurrence) and keeps it until it ends:
-- delivered and running or retrying, it is still in flight. One that must
-- wait stays pending with reason 'concurrency_wait', due again later; the
-- end of a slot's run makes the oldest waiters due at once. The slot table
-- is the key's only shared state: rows of a key lie in many buckets, owned
-- by different instances.
ALTER TABLE events ADD COLUMN concurrency_key text, ADD COLUMN concurrency_limit integer NOT NULL DEFAULT 0;
ALTER TABLE events_archive ADD COLUMN concurrency_key text, ADD COLUMN concurrency_limit integer NOT NULL DEFAULT 0;
CREATE INDEX events_concurrency_key ON events (concurrency_key) WHERE concurrency_key IS NOT NULL;

-- A key's row exists once an occurrence of it asked for a slot, or an
-- operator paused it; acquiring a slot locks it (FOR UPDATE), which orders
-- the key's acquisitions and releases across instances.
CREATE TABLE concurrency_keys (
    key        text PRIMARY KEY,
    paused     boolean     NOT NULL DEFAULT false,
    paused_at  timestamptz,
    paused_by  text,
    created_at timestamptz NOT NULL
);

CREATE TABLE concurrency_slots (
    occurrence_id uuid        PRIMARY KEY,
    key           text        NOT NULL REFERENCES concurrency_keys (key),
    event_id      uuid        NOT NULL,
    scheduled_at  timestamptz NOT NULL,
    acquired_at   timestamptz NOT NULL
);
CREATE INDEX concurrency_slots_key ON concurrency_slots (key);

-- The waiting rows, in due order (few: only rows held back by their key).
CREATE INDEX occurrences_concurrency_wait ON occurrences (scheduled_at, id)
    WHERE reason = 'concurrency_wait' AND status = 'pending';
