#!/usr/bin/env bash
# usage: bench/history.sh N [ROUNDS]
# "With a year of history" (#24): seeds N completed occurrences with one attempt each, spread over the 30-day
# retention, by SQL (bench/history-seed.sql: generate_series, partitions ensured first, ANALYZE after), then runs
# the 10,000-due-within-one-second burst and a steady run (STEADY_RATE a second, default 500, for STEADY_DURATION,
# default 30s; STEADY_RATE=0 skips it) against the same server build on an empty database and on the seeded one,
# alternating (empty, history, empty, history, … ROUNDS pairs, default 2), and prints throughput and p99 lateness
# with the history/empty ratios. bench/history-reads.sh times the first views of the list, stats and console
# pages against each database first.
# This machine's PostgreSQL runs with autovacuum off, so nothing would ever analyze the seeded tables: the seed
# ends with ANALYZE, as an installation's autovacuum would (docs/production.md lists the settings it needs).
# Build first: go build -o /tmp/qhronosd ./cmd/qhronosd && go build -o /tmp/qhronos-bench ./cmd/qhronos-bench
# (QHRONOSD and QHRONOS_BENCH name other builds).
# PGPORT selects another PostgreSQL; REDIS_URL another Redis.
set -eu
cd "$(dirname "$0")/.."
N=${1:?usage: bench/history.sh N [ROUNDS]}
ROUNDS=${2:-2}
STEADY_RATE=${STEADY_RATE:-500}
STEADY_DURATION=${STEADY_DURATION:-30s}
# the steady run's events are created ahead through the API (a few thousand a second)
STEADY_DUE_IN=${STEADY_DUE_IN:-$(( STEADY_RATE * ${STEADY_DURATION%s} / 1000 + 20 ))s}
PGP=${PGPORT:-5432}
PSQL=(psql -h 127.0.0.1 -p "$PGP" -U postgres -v ON_ERROR_STOP=1 -q)
PORT=18240
QD=${QHRONOSD:-/tmp/qhronosd}
QB=${QHRONOS_BENCH:-/tmp/qhronos-bench}
OUT=$(mktemp -d)
SEC=$(openssl rand -hex 32)
MT=$(openssl rand -hex 32)
export QHRONOS_AUTH_MASTER_TOKEN=$MT QHRONOS_AUTH_JWT_SECRET=$(openssl rand -hex 32) QHRONOS_HMAC_DEFAULT_SECRET=$SEC \
  QHRONOS_SECRETS_ENCRYPTION_KEY=$(openssl rand -hex 32) QHRONOS_OUTBOUND_ALLOW_CIDRS=127.0.0.0/8 QHRONOS_LOG_LEVEL=warn \
  QHRONOS_REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/0}
url() { echo "postgres://postgres@127.0.0.1:$PGP/$1?sslmode=disable"; }

fresh() { # fresh DB: a migrated, empty database
  "${PSQL[@]}" -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1" >/dev/null
  QHRONOS_DATABASE_URL=$(url "$1") "$QD" migrate >/dev/null
}

run() { # run DB LABEL: one burst against a server on DB
  local db=$1 label=$2 d
  d=$(mktemp -d)
  QHRONOS_DATABASE_URL=$(url "$db") QHRONOS_REDIS_PREFIX=bench-hist-$label-$$: \
    "$QD" --addr 127.0.0.1:$PORT --data-dir "$d/data" >"$d/server.log" 2>&1 &
  local spid=$!
  for _ in $(seq 1 100); do curl -sf http://127.0.0.1:$PORT/ready >/dev/null && break; sleep 0.2; done
  bench/history-reads.sh "$(url "$db")" "http://127.0.0.1:$PORT" "$MT" >"$OUT/reads-$label.txt" 2>&1 ||
    echo "history-reads.sh failed: see $OUT/reads-$label.txt"
  QHRONOS_TOKEN=$MT "$QB" --server http://127.0.0.1:$PORT --verify-signature "$SEC" --server-pid $spid \
    --events 10000 --burst-window 1s --due-in 60s --create-concurrency 32 --receivers 8 --json >"$OUT/$label.json" || true
  if [ "$STEADY_RATE" != 0 ]; then
    QHRONOS_TOKEN=$MT "$QB" --server http://127.0.0.1:$PORT --verify-signature "$SEC" --server-pid $spid \
      --mode steady --rate "$STEADY_RATE" --duration "$STEADY_DURATION" --due-in "$STEADY_DUE_IN" \
      --create-concurrency 32 --receivers 8 --json >"$OUT/$label-steady.json" || true
  fi
  kill $spid; wait $spid 2>/dev/null || true
  redis-cli -u "${REDIS_URL:-redis://127.0.0.1:6379/0}" --scan --pattern "bench-hist-$label-$$:*" \
    | xargs -r redis-cli -u "${REDIS_URL:-redis://127.0.0.1:6379/0}" del >/dev/null
  python3 - "$OUT" "$label" <<'PY'
import json, os, sys
for kind in ("", "-steady"):
    f = f"{sys.argv[1]}/{sys.argv[2]}{kind}.json"
    if not os.path.exists(f):
        continue
    r = json.load(open(f))
    print(f"{sys.argv[2] + kind:<18} deliveries/s {r['deliveries_per_second']:8.0f}  p50 lateness {r['lateness_ms']['p50']:7.1f} ms"
          f"  p99 {r['lateness_ms']['p99']:7.1f} ms  lost {r['lost']}  duplicates {r['duplicates']}")
PY
}

# REUSE=1 keeps a bench_hist_full seeded by an earlier run (seeding millions takes minutes).
if [ "${REUSE:-0}" = 1 ] && "${PSQL[@]}" -d bench_hist_full -Atc "SELECT 1" >/dev/null 2>&1; then
  echo "== reusing bench_hist_full"
else
  echo "== seeding $N occurrences + $N attempts of history (bench_hist_full)"
  fresh bench_hist_full
  start=$(date +%s)
  "${PSQL[@]}" -d bench_hist_full -v n="$N" -v days=30 -f bench/history-seed.sql
  echo "seeded in $(( $(date +%s) - start )) s"
fi
echo "history: $("${PSQL[@]}" -d bench_hist_full -Atc "SELECT COUNT(*) FROM occurrences") occurrences; database size: $("${PSQL[@]}" -d bench_hist_full -Atc \
  "SELECT pg_size_pretty(pg_database_size(current_database()))"); partitions: $("${PSQL[@]}" -d bench_hist_full -Atc \
  "SELECT COUNT(*) FROM qhronos_partitions('occurrences')")"
for r in $(seq 1 "$ROUNDS"); do
  fresh bench_hist_empty
  run bench_hist_empty "empty-$r"
  run bench_hist_full "history-$r"
done
"${PSQL[@]}" -c "DROP DATABASE IF EXISTS bench_hist_empty" >/dev/null
python3 - "$OUT" "$ROUNDS" <<'PY'
import json, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def load(kind, suffix):
    fs = [f"{out}/{kind}-{r}{suffix}.json" for r in range(1, rounds + 1)]
    return [json.load(open(f)) for f in fs if os.path.exists(f)]
med = lambda rs, f: statistics.median(f(r) for r in rs)
tp = lambda r: r["deliveries_per_second"]
p99 = lambda r: r["lateness_ms"]["p99"]
for name, suffix in (("burst", ""), ("steady", "-steady")):
    e, h = load("empty", suffix), load("history", suffix)
    if not e or not h:
        continue
    print(f"{name}: median empty {med(e, tp):.0f}/s, p99 {med(e, p99):.1f} ms; median history {med(h, tp):.0f}/s, "
          f"p99 {med(h, p99):.1f} ms; throughput history/empty {med(h, tp) / med(e, tp):.2f}, "
          f"p99 history/empty {med(h, p99) / med(e, p99):.2f} (target: >= 0.9 and <= 1/0.9)")
PY
for f in "$OUT"/reads-*.txt; do [ -e "$f" ] && { echo "== $(basename "$f")"; cat "$f"; }; done
echo "(bench_hist_full is kept for inspection; drop it with: psql -c 'DROP DATABASE bench_hist_full')"
