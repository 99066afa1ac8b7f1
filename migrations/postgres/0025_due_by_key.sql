-- #36: the due index orders waiting rows by instant and then id (as SQLite's
-- since its 0025), so the owner of a bucket slot reads each batch after the
-- last row of the one before, instead of passing every row in flight as a
-- list that each read walked past along the index, fetching every row to
-- compare its id: under a steady 7,000/s, a read of 300 rows walked past
-- 2,000–3,000 rows in flight, 6 ms of its 7.5.
--
-- Built under a new name before the old one goes, so the instances of the
-- previous version keep their index for their reads until the commit (the
-- build blocks writes to occurrences, not reads); they read the new one
-- as well as the old.
CREATE INDEX occurrences_due_by_key ON occurrences (next_attempt_at, id) WHERE status IN ('pending', 'retrying');
DROP INDEX occurrences_due;
ALTER INDEX occurrences_due_by_key RENAME TO occurrences_due;
