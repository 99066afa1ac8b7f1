-- Upsert and debounce by key (#29): an event may carry a client key, unique
-- among live events of one key scope (the principal's tag scope; "*" for the
-- master token), and a debounce window with its bound.
ALTER TABLE events ADD COLUMN key_scope text;
ALTER TABLE events ADD COLUMN event_key text;
ALTER TABLE events ADD COLUMN debounce_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN max_wait_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN debounce_since TIMESTAMP;
ALTER TABLE events_archive ADD COLUMN key_scope text;
ALTER TABLE events_archive ADD COLUMN event_key text;
ALTER TABLE events_archive ADD COLUMN debounce_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events_archive ADD COLUMN max_wait_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events_archive ADD COLUMN debounce_since TIMESTAMP;
-- A deleted event frees its key: the next upsert creates a new event.
CREATE UNIQUE INDEX events_key_live ON events (event_key, key_scope)
    WHERE event_key IS NOT NULL AND deleted_at IS NULL;
