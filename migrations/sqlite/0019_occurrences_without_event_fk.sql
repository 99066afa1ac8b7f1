-- PostgreSQL's 0019 drops the foreign key from occurrences to events (it
-- locked events whenever a weekly partition was attached). SQLite has no
-- partitions and keeps its key; this step keeps the two version lists equal.
SELECT 1;
