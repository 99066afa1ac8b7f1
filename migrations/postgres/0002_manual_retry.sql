-- An operator asked to deliver this occurrence again: its next attempt is
-- recorded as manual and is allowed past the retry limit.
ALTER TABLE occurrences ADD COLUMN manual_retry boolean NOT NULL DEFAULT false;
ALTER TABLE occurrences_archive ADD COLUMN manual_retry boolean NOT NULL DEFAULT false;
