-- Rollups without triggers (#36): the repository writes them itself, in the
-- transaction that changes the rows (see the PostgreSQL migration and
-- internal/repository/rollups.go). SQLite keeps upserting the one compacted
-- row of each key; the tables and their readers are unchanged.
DROP TRIGGER IF EXISTS occurrences_rollup_insert;
DROP TRIGGER IF EXISTS occurrences_rollup_leave;
DROP TRIGGER IF EXISTS occurrences_rollup_enter;
DROP TRIGGER IF EXISTS attempts_rollup_insert;
