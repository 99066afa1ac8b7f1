#!/usr/bin/env bash
# Bytes qhronosd allocates a delivered row in a burst, and the functions they come from: a heap profile from 1 s
# before the due instant to 13 s after it (the burst drained and its outcomes written; the bench keeps listening,
# so the server is still up), divided by the burst's size. Unlike CPU time it does not drift with the machine's
# speed, so two builds compare in one run each.
# usage: bench/alloc-split.sh [EVENTS] [DUE_IN_SECONDS]   (QHRONOSD / QHRONOS_BENCH pick the binaries, see pg-run.sh)
set -u
cd "$(dirname "$0")/.."
n=${1:-40000} due=${2:-35} port=$((6100 + RANDOM % 800))
d=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$d"' EXIT; [ -n "${KEEP:-}" ] && echo "profiles in $d"
( sleep $((due - 1)); curl -s -o "$d/before" "http://127.0.0.1:$port/debug/pprof/heap"
  sleep 14; curl -s -o "$d/after" "http://127.0.0.1:$port/debug/pprof/heap" ) &
QHRONOS_PPROF_ADDR=127.0.0.1:$port bash bench/pg-run.sh alloc$RANDOM $((20000 + RANDOM % 10000)) -- --mode burst \
	--events "$n" --burst-window 0 --due-in "${due}s" --create-concurrency 32 --receivers 8 --timeout 120s --settle 20s 2>/dev/null |
	grep -E "deliveries/s|^lost|^duplicates"
wait
top=$(go tool pprof -sample_index=alloc_space -top -nodecount=${TOP:-12} -base "$d/before" "${QHRONOSD:-/tmp/qhronosd}" "$d/after" 2>/dev/null)
python3 - "$n" "$top" <<'PY'
import re, sys
n, top = int(sys.argv[1]), sys.argv[2]
m = re.search(r"of ([0-9.]+)([kMG]?B) total", top)
size = float(m.group(1)) * {"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}[m.group(2)]
print(f"allocated        {size / n / 1024:.2f} KiB a row")
PY
echo "$top" | sed -n '/flat%/,$p'
