-- Rollups without triggers (#36). The statement-level triggers of 0013 fired
-- on every claim, lease renewal and outcome, with transition tables, on the
-- hot path. The repository now writes the rollups itself, in the
-- transaction that changes the rows: the dispatcher's outcome batch adds
-- its counts (aggregated in Go, one multi-row insert of fresh rows per
-- rollup table) and every rarer statement that moves an occurrence into or
-- out of a finished status adds the delta of the rows it changed (see
-- internal/repository/rollups.go). The tables, their compaction and their
-- readers are unchanged. Dropping a trigger on the partitioned parent drops
-- its clones on the partitions.
DROP TRIGGER IF EXISTS occurrences_rollup_insert ON occurrences;
DROP TRIGGER IF EXISTS occurrences_rollup_update ON occurrences;
DROP TRIGGER IF EXISTS attempts_rollup_insert ON attempts;
DROP FUNCTION IF EXISTS qhronos_rollup_occurrences();
DROP FUNCTION IF EXISTS qhronos_rollup_attempts();
-- Nothing reads the SQL bucket function any more: the buckets are computed
-- in Go (repository.LatencyBucket), which it mirrored.
DROP FUNCTION IF EXISTS qhronos_latency_bucket(bigint);
