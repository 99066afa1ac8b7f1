-- An operator asked to deliver this occurrence again: its next attempt is
-- recorded as manual and is allowed past the retry limit.
ALTER TABLE occurrences ADD COLUMN manual_retry INTEGER NOT NULL DEFAULT 0;
ALTER TABLE occurrences_archive ADD COLUMN manual_retry INTEGER NOT NULL DEFAULT 0;
