#!/usr/bin/env bash
# Chaos run (BENCHMARKS.md, "Chaos"): three qhronosd instances on one
# PostgreSQL database and one Redis, both private to this run — its own
# redis-server on an ephemeral loopback port and its own database on the
# PostgreSQL server — deliver ≥ 10,000 one-time webhooks to loopback
# receivers (qhronos-bench, steady mode) while one instance is killed with
# SIGKILL and restarted every KILL_EVERY seconds (in turn: b, c, a, …) and
# Redis is restarted once, empty, halfway through.
#
# It reports lost occurrences (must be 0), duplicates split by cause, and the
# worst lateness. A duplicate is acceptable only as a send the server could
# not record because its process was killed: the receiver saw that
# webhook-id more often than the database holds attempts for it, and a kill
# happened between the first receipt and the last. Every delivery of an
# occurrence carries its one webhook-id (qhronos-bench keys receipts by it; a
# second id for one event would show as extra_occurrences).
#
# Bounded: RATE × DURATION events, the run ends TIMEOUT after the last due
# instant at the latest. Loopback only. The shared 127.0.0.1:6379 Redis is
# never touched; on PostgreSQL only the run's own database is created and
# dropped.
#
# usage: bench/chaos.sh            (from the repository root)
#   RATE=56 DURATION=180s KILL_EVERY=20 DUE_IN=30s TIMEOUT=90s
#   PG_ADMIN_URL=postgres://postgres@127.0.0.1:5432/postgres
#   KEEP=1 keeps the work directory (logs, receipts, report)
#   QHRONOSD=path runs that server binary instead of building ./cmd/qhronosd
#   (to measure another build; qhronos-bench is always built from here)
set -euo pipefail

RATE=${RATE:-56}
DURATION=${DURATION:-180s}
KILL_EVERY=${KILL_EVERY:-20}
DUE_IN=${DUE_IN:-30s}
TIMEOUT=${TIMEOUT:-90s}
PG_ADMIN_URL=${PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}

secs() { local d=$1; case $d in *ms) echo 1;; *m) echo $(( ${d%m} * 60 ));; *s) echo "${d%s}";; *) echo "$d";; esac; }
now_ms() { date +%s%3N; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
log() { echo "chaos: $(date -u +%H:%M:%S) $*" >&2; }

W=$(mktemp -d /tmp/qhronos-chaos.XXXXXX)
DB=chaos_$$_$RANDOM
DB_URL="${PG_ADMIN_URL%/*}/$DB?sslmode=disable"
declare -A PID PORT
REDIS_PID=""
KILLER_PID=""

cleanup() {
	set +e
	[ -n "$KILLER_PID" ] && kill "$KILLER_PID" 2>/dev/null && wait "$KILLER_PID" 2>/dev/null
	for i in a b c; do
		p=$(cat "$W/pid.$i" 2>/dev/null)
		[ -n "$p" ] && kill -TERM "$p" 2>/dev/null
	done
	for i in a b c; do
		p=$(cat "$W/pid.$i" 2>/dev/null)
		[ -n "$p" ] && timeout 15 tail --pid="$p" -f /dev/null
	done
	[ -n "$REDIS_PORT" ] && redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1
	psql "$PG_ADMIN_URL" -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1
	if [ -n "${KEEP:-}" ]; then log "work directory kept: $W"; else rm -rf "$W"; fi
}
REDIS_PORT=""
trap cleanup EXIT

log "building into $W"
if [ -n "${QHRONOSD:-}" ]; then cp "$QHRONOSD" "$W/qhronosd"; else go build -o "$W/qhronosd" ./cmd/qhronosd; fi
go build -o "$W/qhronos-bench" ./cmd/qhronos-bench

REDIS_PORT=$(free_port)
start_redis() {
	(redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save '' --appendonly no --dir "$W" \
		>>"$W/redis.log" 2>&1 & echo $! >"$W/pid.redis")
	for _ in $(seq 1 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && return 0; sleep 0.1; done
	log "redis-server did not start"; return 1
}
start_redis
psql "$PG_ADMIN_URL" -qc "CREATE DATABASE $DB" >/dev/null
log "private redis 127.0.0.1:$REDIS_PORT, database $DB"

TOKEN=$(openssl rand -hex 32)
SECRET=$(openssl rand -hex 32)
export QHRONOS_DATABASE_URL=$DB_URL QHRONOS_REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0 QHRONOS_REDIS_PREFIX=chaos:
export QHRONOS_AUTH_MASTER_TOKEN=$TOKEN QHRONOS_AUTH_JWT_SECRET=$(openssl rand -hex 32)
export QHRONOS_HMAC_DEFAULT_SECRET=$SECRET QHRONOS_SECRETS_ENCRYPTION_KEY=$(openssl rand -hex 32)
export QHRONOS_OUTBOUND_ALLOW_CIDRS=127.0.0.0/8 QHRONOS_LOG_LEVEL=warn QHRONOS_DATABASE_MAX_OPEN_CONNS=10
export QHRONOS_ARCHIVAL_ENABLED=false

for i in a b c; do PORT[$i]=$(free_port); done
start_instance() {
	local i=$1
	# Started from a subshell, so that its SIGKILL is not reported as a job.
	("$W/qhronosd" --addr "127.0.0.1:${PORT[$i]}" --data-dir "$W/data.$i" >>"$W/server.$i.log" 2>&1 &
		echo $! >"$W/pid.$i")
	for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:${PORT[$i]}/ready" >/dev/null && return 0; sleep 0.1; done
	log "instance $i not ready after 10 s"
}
for i in a b c; do start_instance "$i"; done
log "instances a b c on ports ${PORT[a]} ${PORT[b]} ${PORT[c]}"

# The killer: every KILL_EVERY seconds one instance, in turn, gets SIGKILL
# and is restarted at once; Redis is restarted once, halfway.
RUN_SECS=$(( $(secs "$DUE_IN") + $(secs "$DURATION") ))
killer() {
	local n=0 order=(b c a) half=$(( RUN_SECS / 2 )) started redis_done=""
	started=$(date +%s)
	while :; do
		sleep "$KILL_EVERY"
		local elapsed=$(( $(date +%s) - started ))
		[ "$elapsed" -ge "$RUN_SECS" ] && return 0
		local i=${order[$(( n % 3 ))]}
		n=$(( n + 1 ))
		echo "$(now_ms),kill,$i" >>"$W/kills.log"
		kill -KILL "$(cat "$W/pid.$i")" 2>/dev/null || true
		tail --pid="$(cat "$W/pid.$i")" -f /dev/null
		start_instance "$i"
		log "killed and restarted $i"
		if [ -z "$redis_done" ] && [ "$elapsed" -ge "$half" ]; then
			redis_done=1
			echo "$(now_ms),redis," >>"$W/kills.log"
			redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
			tail --pid="$(cat "$W/pid.redis")" -f /dev/null
			start_redis
			log "restarted redis (empty)"
		fi
	done
}
: >"$W/kills.log"
killer &
KILLER_PID=$!

set +e
QHRONOS_TOKEN=$TOKEN "$W/qhronos-bench" --server "http://127.0.0.1:${PORT[a]}" --mode steady --rate "$RATE" \
	--duration "$DURATION" --due-in "$DUE_IN" --timeout "$TIMEOUT" --settle 10s --receivers 4 \
	--create-concurrency 16 --verify-signature "$SECRET" --check-recorded 0 --receipts "$W/receipts.csv" \
	--json >"$W/report.json" 2>"$W/bench.log"
BENCH_RC=$?
set -e
kill "$KILLER_PID" 2>/dev/null || true # it may have finished its rounds already
wait "$KILLER_PID" 2>/dev/null || true
KILLER_PID=""
log "qhronos-bench exited $BENCH_RC (3 = duplicates or losses, judged below)"

# Join the receipts with the database: per delivery id, receipts, first and
# last receipt, and the attempts the server recorded.
psql "$DB_URL" -qv ON_ERROR_STOP=1 >"$W/analysis.txt" <<SQL
CREATE TEMP TABLE receipts (delivery_id text, event_id text, attempt int, scheduled_at timestamptz, received_at timestamptz);
\copy receipts FROM '$W/receipts.csv' WITH (FORMAT csv, HEADER true)
CREATE TEMP TABLE kills (at_ms bigint, what text, instance text);
\copy kills FROM '$W/kills.log' WITH (FORMAT csv)
CREATE TEMP TABLE per_id AS
  SELECT r.delivery_id, count(*) AS receipts, min(r.received_at) AS first_at, max(r.received_at) AS last_at,
         (SELECT count(*) FROM attempts a WHERE a.occurrence_id::text = r.delivery_id) AS recorded
  FROM receipts r GROUP BY r.delivery_id;
\pset format unaligned
\pset tuples_only on
SELECT 'occurrences_in_db=' || count(*) FROM occurrences;
SELECT 'not_completed=' || count(*) FROM occurrences WHERE status <> 'completed';
SELECT 'duplicates=' || coalesce(sum(receipts - 1), 0) FROM per_id WHERE receipts > 1;
SELECT 'dup_unrecorded_send_across_kill=' || coalesce(sum(receipts - recorded), 0) FROM per_id p
  WHERE receipts > recorded AND EXISTS (SELECT 1 FROM kills k WHERE k.what <> 'redis'
    AND to_timestamp(k.at_ms / 1000.0) BETWEEN p.first_at - interval '1 second' AND p.last_at);
SELECT 'dup_unexplained=' || coalesce(sum(receipts - recorded), 0) FROM per_id p
  WHERE receipts > recorded AND NOT EXISTS (SELECT 1 FROM kills k WHERE k.what <> 'redis'
    AND to_timestamp(k.at_ms / 1000.0) BETWEEN p.first_at - interval '1 second' AND p.last_at);
SELECT 'dup_retry_after_recorded_failure=' || coalesce(sum(least(receipts, recorded) - 1), 0) FROM per_id WHERE recorded > 1;
SELECT 'kills=' || count(*) FILTER (WHERE what <> 'redis') || ' redis_restarts=' || count(*) FILTER (WHERE what = 'redis') FROM kills;
SQL

python3 - "$W/report.json" "$W/analysis.txt" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
a = dict(l.split("=", 1) for l in open(sys.argv[2]).read().split() if "=" in l)
lat = r["lateness_ms"]
print(f"events created {r['events_created']} (planned {r['events_planned']}, failed {r['create_failed']}, "
      f"skipped late {r['create_skipped_late']}); receipts {r['receipts']}; occurrences in db {a['occurrences_in_db']}")
print(f"lost {r['lost']}; not completed in db {a['not_completed']}; extra occurrences {r['extra_occurrences']}; "
      f"bad signatures {r['bad_signatures']}")
print(f"duplicates {a['duplicates']}: unrecorded send across a kill {a['dup_unrecorded_send_across_kill']}, "
      f"retry after a recorded failure {a['dup_retry_after_recorded_failure']}, unexplained {a['dup_unexplained']}")
print(f"lateness of first delivery (ms): p50 {lat['p50']:.0f}, p99 {lat['p99']:.0f}, max {lat['max']:.0f}")
print(f"instances killed {a['kills']} times, redis restarted {a['redis_restarts']} times")
ok = r["lost"] == 0 and a["not_completed"] == "0" and a["dup_unexplained"] == "0" and r["extra_occurrences"] == 0
print("verdict:", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
