#!/usr/bin/env bash
# Redis-away dispatch: the same 5,000 burst on PostgreSQL twice, once with
# Redis answering and once with Redis unreachable (a loopback port that
# completes TCP handshakes and never answers, as a partitioned or frozen
# Redis looks), and the delivery rate of each.
# usage: bench/redis-down.sh [PORT]   (binaries: /tmp/qhronosd, /tmp/qhronos-bench)
set -euo pipefail
PORT=${1:-18120}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
FLAGS=(--events 5000 --burst-window 0 --due-in 15s --create-concurrency 32 --receivers 8)

# A listening socket that never accepts: the kernel completes handshakes, no
# byte ever comes back.
python3 - <<'PY' &
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(1024)
open("/tmp/redis-blackhole.port", "w").write(str(s.getsockname()[1]))
time.sleep(600)
PY
HOLE_PID=$!
trap 'kill $HOLE_PID 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do [ -s /tmp/redis-blackhole.port ] && break; sleep 0.1; done
HOLE=$(cat /tmp/redis-blackhole.port); rm -f /tmp/redis-blackhole.port

echo "== Redis up"
bash bench/pg-run.sh rup "$PORT" -- "${FLAGS[@]}"
echo "== Redis unreachable (127.0.0.1:$HOLE)"
REDIS_URL="redis://127.0.0.1:$HOLE/0" bash bench/pg-run.sh rdown "$((PORT + 1))" -- "${FLAGS[@]}"
