-- #36: the due index orders waiting rows by instant and then id, so the
-- owner of every bucket (the one process) reads each batch of a burst after
-- the last row of the one before, instead of passing every row in flight as
-- a list that the read walked past along the index, fetching each row's id.
DROP INDEX occurrences_due;
CREATE INDEX occurrences_due ON occurrences (next_attempt_at, id) WHERE status IN ('pending', 'retrying');
