#!/usr/bin/env bash
# usage: bench/punctuality.sh [N]
# The punctuality report with history (#38): seeds N completed occurrences with one attempt each (default
# 50,000,000) over the last 30 days for 1,000 events, by SQL (bench/history-seed.sql with spread lateness), into
# database bench_punct; counts them into the punctuality rollups the way an upgrading installation does (migration
# 0022 re-applied: its time is the upgrade's), starts qhronosd on it and times GET /stats/punctuality for the
# windows and groupings a user opens (REQUESTS per route after a warm-up, default 50), printing p50/p99.
# REUSE=1 keeps bench_punct from an earlier run (the 50 M seed takes about 50 minutes).
# Build first: go build -o /tmp/qhronosd ./cmd/qhronosd (QHRONOSD names another build); PGPORT another PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-50000000}
REQ=${REQUESTS:-50}
PGP=${PGPORT:-5432}
PSQL=(psql -h 127.0.0.1 -p "$PGP" -U postgres -v ON_ERROR_STOP=1 -q)
QD=${QHRONOSD:-/tmp/qhronosd}
PORT=18260
DB=bench_punct
URL="postgres://postgres@127.0.0.1:$PGP/$DB?sslmode=disable"
MT=$(openssl rand -hex 32)
export QHRONOS_AUTH_MASTER_TOKEN=$MT QHRONOS_AUTH_JWT_SECRET=$(openssl rand -hex 32) \
  QHRONOS_HMAC_DEFAULT_SECRET=$(openssl rand -hex 32) QHRONOS_SECRETS_ENCRYPTION_KEY=$(openssl rand -hex 32) \
  QHRONOS_LOG_LEVEL=warn QHRONOS_DATABASE_URL=$URL
if [[ -z ${REUSE:-} ]]; then
  "${PSQL[@]}" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" >/dev/null
  "$QD" migrate >/dev/null
  echo "== seeding $N occurrences + $N attempts (spread lateness)"
  start=$(date +%s)
  "${PSQL[@]}" -d $DB -v n="$N" -v days=30 -v spread=true -f bench/history-seed.sql
  echo "seeded in $(( $(date +%s) - start )) s"
  "${PSQL[@]}" -d $DB -c "DROP TABLE punctuality_rollups" -c "DROP TABLE punctuality_fresh" \
    -c "DELETE FROM schema_migrations WHERE version = 22"
  start=$(date +%s.%N)
  "$QD" migrate >/dev/null
  echo "migration 0022 counted the history in $(echo "$(date +%s.%N) - $start" | bc) s"
fi
"${PSQL[@]}" -d $DB -Atc "SELECT 'punctuality rows: ' || COUNT(*) FILTER (WHERE width = 'h') || ' hour, ' ||
  COUNT(*) FILTER (WHERE width = 'd') || ' day; ~' || (SELECT reltuples::bigint FROM pg_class WHERE relname = 'occurrences')
  || ' occurrences (planner estimate)' FROM punctuality_rollups"
WORK=$(mktemp -d)
"$QD" --addr 127.0.0.1:$PORT --data-dir "$WORK/data" >"$WORK/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 150); do curl -fsS -o /dev/null "http://127.0.0.1:$PORT/ready" 2>/dev/null && break; sleep 0.2; done
time_route() {
  local name=$1 path=$2
  curl -fsS -H "Authorization: Bearer $MT" -o /dev/null "http://127.0.0.1:$PORT$path"
  : >"$WORK/t"
  for _ in $(seq "$REQ"); do
    curl -fsS -H "Authorization: Bearer $MT" -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$PORT$path" >>"$WORK/t"
  done
  sort -n "$WORK/t" | awk -v name="$name" '{ v[NR] = $1 * 1000 }
    END { p50 = v[int((NR * 50 + 99) / 100)]; p99 = v[int((NR * 99 + 99) / 100)]
          printf "| %-58s | %8.1f | %8.1f |\n", name, p50, p99 }'
}
echo "$(date -u +%FT%TZ), $REQ requests per route, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf "| %-58s | %8s | %8s |\n|---|---:|---:|\n" "route" "p50 ms" "p99 ms"
time_route "GET /stats/punctuality (7 days by event, the default)" "/stats/punctuality"
time_route "GET /stats/punctuality?group_by=tag (7 days)" "/stats/punctuality?group_by=tag"
day=$(date -u -d '24 hours ago' +%FT%TZ)
month=$(date -u -d '30 days ago' +%FT%TZ)
time_route "GET /stats/punctuality?from=<24 h ago> (hourly trend)" "/stats/punctuality?from=$day"
time_route "GET /stats/punctuality?from=<30 days ago> (by event)" "/stats/punctuality?from=$month"
time_route "GET /stats/punctuality?from=<30 days ago>&group_by=tag" "/stats/punctuality?from=$month&group_by=tag"
