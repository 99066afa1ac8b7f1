#!/usr/bin/env bash
# usage: pg-run.sh NAME PORT -- bench flags...
# REDIS_URL overrides the shared Redis; PGPORT the shared PostgreSQL's port (a private cluster).
set -u
NAME=$1; PORT=$2; shift 3
D=$(mktemp -d)
psql -h 127.0.0.1 -p ${PGPORT:-5432} -U postgres -qc "DROP DATABASE IF EXISTS bench_$NAME" -qc "CREATE DATABASE bench_$NAME" >/dev/null
MT=$(openssl rand -hex 32); SEC=$(openssl rand -hex 32)
QHRONOS_DATABASE_URL="postgres://postgres@127.0.0.1:${PGPORT:-5432}/bench_$NAME?sslmode=disable" QHRONOS_REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/0} \
QHRONOS_REDIS_PREFIX=bench-$NAME-$$: QHRONOS_AUTH_MASTER_TOKEN=$MT QHRONOS_AUTH_JWT_SECRET=$(openssl rand -hex 32) \
QHRONOS_HMAC_DEFAULT_SECRET=$SEC QHRONOS_SECRETS_ENCRYPTION_KEY=$(openssl rand -hex 32) \
QHRONOS_OUTBOUND_ALLOW_CIDRS=127.0.0.0/8 QHRONOS_LOG_LEVEL=warn /tmp/qhronosd --addr 127.0.0.1:$PORT --data-dir $D/data > $D/server.log 2>&1 &
SPID=$!
for i in $(seq 1 50); do curl -sf http://127.0.0.1:$PORT/ready >/dev/null && break; sleep 0.2; done
QHRONOS_TOKEN=$MT /tmp/qhronos-bench --server http://127.0.0.1:$PORT --verify-signature "$SEC" --server-pid $SPID "$@"
kill $SPID; wait $SPID 2>/dev/null
psql -h 127.0.0.1 -p ${PGPORT:-5432} -U postgres -qc "DROP DATABASE IF EXISTS bench_$NAME" >/dev/null
redis-cli --scan --pattern "bench-$NAME-$$:*" | xargs -r redis-cli del >/dev/null
tail -3 $D/server.log
