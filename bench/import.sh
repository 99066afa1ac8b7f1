#!/usr/bin/env bash
# usage: bench/import.sh pg|sqlite N [qhronos events import flags...]
# Generates N one-time webhook events (JSON Lines, ~300 bytes each, due 2-3 h
# ahead), starts a fresh qhronosd (PostgreSQL: a new database + the shared
# Redis; sqlite: a new data directory), imports them with
# `qhronos events import`, and counts the events, history entries and
# occurrences written, with the CPU of qhronosd, of its PostgreSQL backends and of the CLI.
# Needs $BIN/qhronosd and $BIN/qhronos (BIN defaults to /tmp/qhronos-import-bench):
#   go build -o /tmp/qhronos-import-bench/qhronosd ./cmd/qhronosd && go build -o /tmp/qhronos-import-bench/qhronos ./cmd/qhronos
set -eu
BIN=${BIN:-/tmp/qhronos-import-bench}
BACKEND=$1; N=$2; shift 2
PORT=${PORT:-18190}
D=$(mktemp -d)
FILE=${FILE:-$D/events.jsonl}
if [ ! -s "$FILE" ]; then
python3 - "$N" > "$FILE" <<'PY'
import json, sys, datetime
n = int(sys.argv[1])
base = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0) + datetime.timedelta(hours=2)
w = sys.stdout.write
for i in range(n):
    at = (base + datetime.timedelta(seconds=i % 3600)).strftime("%Y-%m-%dT%H:%M:%SZ")
    w(json.dumps({"name": f"reminder {i}", "description": "imported by bench/import.sh", "start_time": at,
                  "webhook": "http://127.0.0.1:9999/hooks/reminders", "tags": ["import", f"shard-{i % 16}"],
                  "metadata": {"customer_id": 100000 + i, "plan": "pro", "source": "bench"}}, separators=(",", ":")) + "\n")
PY
fi
MT=$(openssl rand -hex 32)
ENV=(QHRONOS_AUTH_MASTER_TOKEN=$MT QHRONOS_AUTH_JWT_SECRET=$(openssl rand -hex 32)
  QHRONOS_HMAC_DEFAULT_SECRET=$(openssl rand -hex 32) QHRONOS_SECRETS_ENCRYPTION_KEY=$(openssl rand -hex 32)
  QHRONOS_OUTBOUND_ALLOW_CIDRS=127.0.0.0/8 QHRONOS_LOG_LEVEL=warn)
if [ "$BACKEND" = pg ]; then
  DB=bench_import_$$
  psql -h 127.0.0.1 -U postgres -qc "CREATE DATABASE $DB" >/dev/null
  ENV+=(QHRONOS_DATABASE_URL="postgres://postgres@127.0.0.1:5432/$DB?sslmode=disable"
    QHRONOS_REDIS_URL=redis://127.0.0.1:6379/0 QHRONOS_REDIS_PREFIX=bench-import-$$:)
fi
env "${ENV[@]}" $BIN/qhronosd --addr 127.0.0.1:$PORT --data-dir $D/data > $D/server.log 2>&1 &
SPID=$!
for i in $(seq 1 100); do curl -sf http://127.0.0.1:$PORT/ready >/dev/null && break; sleep 0.2; done
echo "$(date -u +%FT%TZ) $BACKEND N=$N load: $(cut -d' ' -f1-3 /proc/loadavg) file: $(du -h "$FILE" | cut -f1)"
set +e
QHRONOS_TOKEN=$MT /usr/bin/time -f "import: %e s wall, %U s user, %S s sys, %M KB max RSS" \
  $BIN/qhronos --server http://127.0.0.1:$PORT events import "$FILE" "$@"
RC=$?
ps -o cputime= -p $SPID | sed 's/^/qhronosd cpu: /'
grep VmHWM /proc/$SPID/status | sed 's/^VmHWM:\s*/qhronosd max RSS: /'
if [ "$BACKEND" = pg ]; then # the CPU of the server's PostgreSQL backends (its pool's connections to $DB)
  t=0; for p in $(pgrep -f ": postgres $DB "); do set -- $(cut -d' ' -f14,15 /proc/$p/stat); t=$((t + $1 + $2)); done
  echo "postgres cpu (the server's backends): $((t / $(getconf CLK_TCK))) s"
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$BACKEND" = pg ]; then
  psql -h 127.0.0.1 -U postgres -d $DB -Atc "SELECT 'events ' || (SELECT COUNT(*) FROM events) || ', history ' || (SELECT COUNT(*) FROM event_history) || ', occurrences ' || (SELECT COUNT(*) FROM occurrences)"
fi
kill $SPID; wait $SPID 2>/dev/null
if [ "$BACKEND" = pg ]; then
  psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $DB" >/dev/null
  redis-cli --scan --pattern "bench-import-$$:*" | xargs -r redis-cli del >/dev/null
else
  sqlite3 $D/data/qhronos.db "SELECT 'events ' || (SELECT COUNT(*) FROM events) || ', history ' || (SELECT COUNT(*) FROM event_history) || ', occurrences ' || (SELECT COUNT(*) FROM occurrences)" 2>/dev/null || true
fi
tail -3 $D/server.log
[ -n "${KEEP:-}" ] || rm -rf "$D"
exit $RC
