#!/usr/bin/env bash
# usage: pg-run.sh NAME PORT -- bench flags...
# REDIS_URL overrides the shared Redis; PGPORT the shared PostgreSQL's port (a private cluster).
# QHRONOSD and QHRONOS_BENCH override the binaries' paths (default /tmp/qhronosd, /tmp/qhronos-bench).
# KEEPDB=1 keeps the database afterwards (for its statistics).
# INSTANCES=2 starts a second server on the same database and Redis (port PORT+1000, its own data dir): the
# bench creates through the first, both deliver. The server logs' tails go to stderr.
set -u
NAME=$1; PORT=$2; shift 3
D=$(mktemp -d)
psql -h 127.0.0.1 -p ${PGPORT:-5432} -U postgres -qc "DROP DATABASE IF EXISTS bench_$NAME" -qc "CREATE DATABASE bench_$NAME" >/dev/null
MT=$(openssl rand -hex 32); SEC=$(openssl rand -hex 32)
export QHRONOS_DATABASE_URL="postgres://postgres@127.0.0.1:${PGPORT:-5432}/bench_$NAME?sslmode=disable" QHRONOS_REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/0} \
QHRONOS_REDIS_PREFIX=bench-$NAME-$$: QHRONOS_AUTH_MASTER_TOKEN=$MT QHRONOS_AUTH_JWT_SECRET=$(openssl rand -hex 32) \
QHRONOS_HMAC_DEFAULT_SECRET=$SEC QHRONOS_SECRETS_ENCRYPTION_KEY=$(openssl rand -hex 32) \
QHRONOS_OUTBOUND_ALLOW_CIDRS=127.0.0.0/8 QHRONOS_LOG_LEVEL=warn
SERVER=${QHRONOSD:-/tmp/qhronosd}
$SERVER --addr 127.0.0.1:$PORT --data-dir $D/data > $D/server.log 2>&1 &
SPID=$!
for i in $(seq 1 50); do curl -sf http://127.0.0.1:$PORT/ready >/dev/null && break; sleep 0.2; done
SPID2=
if [ "${INSTANCES:-1}" = 2 ]; then
  # started after the first has migrated the database
  $SERVER --addr 127.0.0.1:$((PORT + 1000)) --data-dir $D/data2 > $D/server2.log 2>&1 &
  SPID2=$!
  for i in $(seq 1 50); do curl -sf http://127.0.0.1:$((PORT + 1000))/ready >/dev/null && break; sleep 0.2; done
fi
unset QHRONOS_AUTH_MASTER_TOKEN QHRONOS_DATABASE_URL
QHRONOS_TOKEN=$MT ${QHRONOS_BENCH:-/tmp/qhronos-bench} --server http://127.0.0.1:$PORT --verify-signature "$SEC" --server-pid $SPID "$@"
kill $SPID $SPID2; wait $SPID $SPID2 2>/dev/null
[ -n "${KEEPDB:-}" ] || psql -h 127.0.0.1 -p ${PGPORT:-5432} -U postgres -qc "DROP DATABASE IF EXISTS bench_$NAME" >/dev/null
redis-cli --scan --pattern "bench-$NAME-$$:*" | xargs -r redis-cli del >/dev/null
tail -3 $D/server.log >&2
[ -n "$SPID2" ] && tail -3 $D/server2.log >&2
rm -rf "$D"
exit 0
