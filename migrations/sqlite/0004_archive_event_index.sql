-- Scoped reads of archived occurrences look up their archived event by id.
CREATE INDEX events_archive_id ON events_archive (id);
