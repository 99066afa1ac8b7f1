#!/usr/bin/env bash
# What the outcome write costs PostgreSQL in three table shapes (#36, thirteenth step), on the 20,000
# occurrences a statements run left behind (`KEEPDB=1 bench/targets.sh statements`, the profiling cluster):
#   today   the occurrences table with its eight indexes: status is in five partial-index predicates, so
#           pending -> completed is a new row version and an entry in four indexes (not HOT);
#   due     a narrow due table (one row per unfinished occurrence, its own indexes) and occurrences with only
#           indexes on columns that never change (fillfactor 80): the outcome deletes the due row and
#           updates the occurrence in place (HOT);
#   hot     the same update without the due table's delete, to tell the two apart;
#   trigger the hot update with a row trigger that deletes the due row: what keeping the due table right for
#           writers that do not know it (an instance of the previous version in a rolling upgrade) would cost.
# Each finishes the 20,000 rows in batches of 100, the size of an outcome batch in a burst, one statement per
# batch in autocommit, in the order they came due; it prints µs of wall time and WAL bytes a row.
# usage: bench/outcome-shapes.sh [ROUNDS] [DB]     (default 3 rounds on bench_t_stmts)
set -eu
ROUNDS=${1:-3}; DB=${2:-bench_t_stmts}
P="psql -h 127.0.0.1 -p 55432 -U postgres -d $DB -qAt -v ON_ERROR_STOP=1"
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cat > "$W/setup.sql" <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS shape_today, shape_hot, shape_due;
CREATE TABLE shape_today (LIKE occurrences INCLUDING DEFAULTS);
INSERT INTO shape_today SELECT * FROM occurrences;
UPDATE shape_today SET status = 'pending', completed_at = NULL, status_code = NULL, response_body = NULL,
    started_at = NULL, attempt_count = 0;
ALTER TABLE shape_today ADD PRIMARY KEY (id, scheduled_at);
CREATE UNIQUE INDEX ON shape_today (event_id, scheduled_at);
CREATE INDEX ON shape_today (scheduled_at DESC, id DESC);
CREATE INDEX ON shape_today (next_attempt_at) WHERE status IN ('pending', 'retrying');
CREATE INDEX ON shape_today (event_id, next_attempt_at) WHERE status IN ('pending', 'retrying');
CREATE INDEX ON shape_today (lease_expires_at) WHERE status IN ('dispatching', 'awaiting_ack');
CREATE INDEX ON shape_today (updated_at) WHERE status IN ('completed', 'failed', 'missed', 'cancelled', 'skipped');
CREATE INDEX ON shape_today (status, scheduled_at DESC, id DESC) WHERE status IN ('failed', 'missed', 'cancelled', 'skipped');
CREATE TABLE shape_hot (LIKE occurrences INCLUDING DEFAULTS) WITH (fillfactor = 80);
INSERT INTO shape_hot SELECT * FROM shape_today;
ALTER TABLE shape_hot ADD PRIMARY KEY (id, scheduled_at);
CREATE UNIQUE INDEX ON shape_hot (event_id, scheduled_at);
CREATE INDEX ON shape_hot (scheduled_at DESC, id DESC);
CREATE TABLE shape_due (id uuid PRIMARY KEY, scheduled_at timestamptz NOT NULL, event_id uuid NOT NULL,
    bucket smallint NOT NULL, next_attempt_at timestamptz NOT NULL);
INSERT INTO shape_due SELECT id, scheduled_at, event_id, bucket, next_attempt_at FROM shape_today;
CREATE INDEX ON shape_due (bucket, next_attempt_at);
CREATE INDEX ON shape_due (event_id, next_attempt_at);
CREATE OR REPLACE FUNCTION shape_due_done() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM shape_due WHERE id = NEW.id;
    RETURN NULL;
END $$;
VACUUM ANALYZE shape_today; VACUUM ANALYZE shape_hot; VACUUM ANALYZE shape_due;
CHECKPOINT;
SQL
$P -f "$W/setup.sql"
# (quotes doubled: it goes inside format()'s string)
set_clause="SET status = ''completed'', completed_at = now(), status_code = 200, response_body = '''', updated_at = now(),
  started_at = now(), lease_token = NULL, lease_owner = NULL, lease_expires_at = NULL, attempt_count = 1"
batches() { # table, prefix (format() with the batch's ids as %1\$L) -> one statement per batch of 100
	$P -c "SELECT format('$2UPDATE $1 $set_clause FROM unnest(%1\$L::uuid[], %2\$L::timestamptz[]) AS v(id, s)
	  WHERE $1.id = v.id AND $1.scheduled_at = v.s AND $1.status = ''pending'';', array_agg(id), array_agg(scheduled_at))
	  FROM (SELECT id, scheduled_at, (row_number() OVER (ORDER BY next_attempt_at, id) - 1) / 100 AS g FROM shape_today) x
	  GROUP BY g ORDER BY g"
}
batches shape_today "" > "$W/today.sql"
batches shape_hot "WITH d AS (DELETE FROM shape_due WHERE id = ANY(%1\$L::uuid[])) " > "$W/due.sql"
batches shape_hot "" > "$W/hot.sql"
cp "$W/hot.sql" "$W/trigger.sql"
rows=$($P -c "SELECT count(*) FROM shape_today")
run() {
	w0=$($P -c "SELECT wal_bytes FROM pg_stat_wal"); s=$(date +%s%N)
	$P -f "$W/$1.sql" >/dev/null
	e=$(date +%s%N); w1=$($P -c "SELECT wal_bytes FROM pg_stat_wal")
	echo "$1: $(( (e - s) / 1000 / rows )) µs a row, $(( (w1 - w0) / rows )) B of WAL a row"
}
for _ in $(seq "$ROUNDS"); do
	run today; run due
	$P -f "$W/setup.sql"; run hot
	$P -f "$W/setup.sql"
	$P -c "CREATE TRIGGER shape_due_done AFTER UPDATE OF status ON shape_hot FOR EACH ROW
	  WHEN (NEW.status IN ('completed', 'failed', 'missed', 'cancelled', 'skipped')) EXECUTE FUNCTION shape_due_done()"
	run trigger
	$P -f "$W/setup.sql"
done
$P -c "DROP TABLE shape_today, shape_hot, shape_due" -c "DROP FUNCTION shape_due_done()"
