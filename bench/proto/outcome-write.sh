#!/usr/bin/env bash
# What writing an outcome costs PostgreSQL, three designs side by side (#36, eighth step; BENCHMARKS.md):
#   today   the occurrence row updated in place (8 indexes, status in their predicates), plus the attempt insert
#   hot     the same update on a table whose indexes a finish leaves alone (fillfactor 50) and a narrow due table
#           kept in step by a trigger: a heap-only update plus a delete
#   ledger  no update: the row leaves the due table and the attempt row is the outcome
# usage: bench/proto/outcome-write.sh [ROUNDS]   (database proto on the local PostgreSQL, dropped and made again)
set -eu
cd "$(dirname "$0")"
P="psql -h 127.0.0.1 -p ${PGPORT:-5432} -U postgres"
$P -qc "DROP DATABASE IF EXISTS proto" -qc "CREATE DATABASE proto" >/dev/null
run() { # name old ff mode
	$P proto -q -v old=$2 -v ff=$3 -f occurrence-table.sql >/dev/null 2>&1
	sed "s/MODE/$4/" outcome-write.sql | $P proto -q -f - 2>&1 | grep -o 'ms [0-9]*' | sed "s/^/$1 /"
}
for _ in $(seq "${1:-3}"); do
	run "today  (update + attempt)" 1 100 1
	run "hot    (update ff 50 + due delete + attempt)" 0 50 1
	run "ledger (due delete + attempt)" 0 100 2
done
$P -qc "DROP DATABASE proto" >/dev/null
