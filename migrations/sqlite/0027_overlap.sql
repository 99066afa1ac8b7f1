-- #37: an event's overlap policy (see the PostgreSQL migration of the same
-- number).
ALTER TABLE events ADD COLUMN overlap text NOT NULL DEFAULT 'allow';
ALTER TABLE events_archive ADD COLUMN overlap text NOT NULL DEFAULT 'allow';
