-- A claim whose lease lapsed with nothing recorded (its instance was cut
-- from the database, stopped or killed) is not charged to the receiver's
-- retry budget: lapses counts those claims, and an occurrence exhausts its
-- attempts on attempt_count - lapses. The rescuer adds to it only up to a
-- bound (scheduler.MaxFreeLapses), so a row whose dispatch keeps killing its
-- instance still ends. Both tables: a week's partition moves between them.
-- A constant default is a catalogue change only: no row is rewritten.
ALTER TABLE occurrences ADD COLUMN lapses integer NOT NULL DEFAULT 0;
ALTER TABLE occurrences_archive ADD COLUMN lapses integer NOT NULL DEFAULT 0;
