#!/usr/bin/env bash
# What the attempt insert costs PostgreSQL with its time index as a btree (today) or as BRIN (#36, thirteenth
# step), on the 20,000 attempts a statements run left behind (`KEEPDB=1 bench/targets.sh statements`, the
# profiling cluster). attempts_by_time serves only range scans (stats windows, rollup rebuilds) of an append-only
# table whose rows arrive in time order, which BRIN serves without an entry per row. Each shape inserts the
# 20,000 rows again with new ids in batches of 100, one statement a batch, in time order; it prints µs of wall
# time and WAL bytes a row.
# usage: bench/attempt-shapes.sh [ROUNDS] [DB]     (default 3 rounds on bench_t_stmts)
set -eu
ROUNDS=${1:-3}; DB=${2:-bench_t_stmts}
P="psql -h 127.0.0.1 -p 55432 -U postgres -d $DB -qAt -v ON_ERROR_STOP=1"
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
setup() { # $1: the time index's method
	$P -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS shape_attempts" \
	  -c "CREATE TABLE shape_attempts (LIKE attempts INCLUDING DEFAULTS)" \
	  -c "ALTER TABLE shape_attempts ADD PRIMARY KEY (id, scheduled_at)" \
	  -c "CREATE INDEX ON shape_attempts (endpoint_id, started_at) WHERE endpoint_id IS NOT NULL" \
	  -c "CREATE INDEX ON shape_attempts (occurrence_id, attempt)" \
	  -c "CREATE INDEX ON shape_attempts USING $1 (started_at)" -c "CHECKPOINT"
}
cols=$($P -c "SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute
  WHERE attrelid = 'attempts'::regclass AND attnum > 0 AND NOT attisdropped AND attname <> 'id'")
# the rows to insert, numbered in batches of 100 in time order, so a batch's read is one index range
$P -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS shape_attempts_src" \
  -c "CREATE TABLE shape_attempts_src AS SELECT (row_number() OVER (ORDER BY started_at, id) - 1) / 100 AS g, $cols
      FROM attempts" -c "CREATE INDEX ON shape_attempts_src (g)" -c "VACUUM ANALYZE shape_attempts_src"
$P -c "SELECT format('INSERT INTO shape_attempts (id, $cols) SELECT gen_random_uuid(), $cols
  FROM shape_attempts_src WHERE g = %s;', g) FROM generate_series(0, (SELECT max(g) FROM shape_attempts_src)) g" > "$W/insert.sql"
rows=$($P -c "SELECT count(*) FROM attempts")
run() {
	setup "$1"
	w0=$($P -c "SELECT wal_bytes FROM pg_stat_wal"); s=$(date +%s%N)
	$P -f "$W/insert.sql" >/dev/null
	e=$(date +%s%N); w1=$($P -c "SELECT wal_bytes FROM pg_stat_wal")
	echo "by_time $1: $(( (e - s) / 1000 / rows )) µs a row, $(( (w1 - w0) / rows )) B of WAL a row"
}
for _ in $(seq "$ROUNDS"); do run btree; run brin; done
$P -c "DROP TABLE shape_attempts, shape_attempts_src"
