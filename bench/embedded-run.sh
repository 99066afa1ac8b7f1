#!/usr/bin/env bash
set -u
# QHRONOSD and QHRONOS_BENCH override the binaries' paths; the server inherits
# the environment (OTEL_* for the tracing runs).
PORT=$1; shift 2
D=$(mktemp -d)
${QHRONOSD:-/tmp/qhronosd} --data-dir $D/data --addr 127.0.0.1:$PORT --log-level warn > $D/server.log 2>&1 &
SPID=$!
for i in $(seq 1 50); do curl -sf http://127.0.0.1:$PORT/ready >/dev/null && break; sleep 0.2; done
TOK=$(python3 -c "import json;print(json.load(open('$D/data/secrets.json'))['master_token'])")
SEC=$(python3 -c "import json;print(json.load(open('$D/data/secrets.json'))['hmac_default_secret'])")
QHRONOS_TOKEN=$TOK ${QHRONOS_BENCH:-/tmp/qhronos-bench} --server http://127.0.0.1:$PORT --verify-signature "$SEC" --server-pid $SPID "$@"
kill $SPID; wait $SPID 2>/dev/null
