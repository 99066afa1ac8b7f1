-- A claim whose lease lapsed with nothing recorded is not charged to the
-- receiver's retry budget: lapses counts those claims (bounded), and an
-- occurrence exhausts its attempts on attempt_count - lapses.
ALTER TABLE occurrences ADD COLUMN lapses INTEGER NOT NULL DEFAULT 0;
ALTER TABLE occurrences_archive ADD COLUMN lapses INTEGER NOT NULL DEFAULT 0;
