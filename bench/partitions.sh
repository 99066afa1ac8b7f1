#!/usr/bin/env bash
# Network partitions, long form (BENCHMARKS.md, "Network partitions"): every
# scenario of test/partitions — three qhronosd instances, each in its own
# Linux network namespace behind Toxiproxy links to PostgreSQL, Redis and the
# receivers — with a burst of 5,000 occurrences due together just before the
# fault and 1,500 more due evenly from 5 s before it to 10 s after its heal;
# faults of 30 s (one minute for the flapping and the slow database). About
# 10 minutes; the scenarios run one at a time so their figures are their own.
#
# Prints one line per scenario and exits non-zero unless every one is PASS:
#   scenario=… lost=N dup=N late_max_ms=N recovered_s=N verdict=PASS|FAIL
# lost: due occurrences no receiver ever processed (must be 0); dup: receipts
# beyond the first (each a retry of a recorded failure or a send under way
# at the fault; anything else fails the verdict); late_max_ms: the worst
# first receipt after its instant; recovered_s: from the heal until the last
# occurrence due before it reached its receiver.
#
# Needs root (network namespaces) and PostgreSQL and Redis on loopback, as
# the tests do; each scenario uses a schema and a Redis prefix of its own and
# removes its namespaces, links and processes at the end.
#
# usage: bench/partitions.sh                  (from the repository root)
#   RUN=regexp runs only the matching scenarios' tests (e.g. RUN=Isolated)
#   HISTORY=dir keeps each run's history (receipts, attempts, sends) as JSON
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="/usr/local/go/bin:${PATH}"

RUN=${RUN:-.}
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT

if [ -n "${HISTORY:-}" ]; then
  mkdir -p "$HISTORY"
  export QHRONOS_PARTITIONS_HISTORY=$HISTORY
fi

status=0
QHRONOS_PARTITIONS=long CI=true go test -count=1 -timeout 45m -parallel 1 -v -run "$RUN" ./test/partitions/ >"$OUT" 2>&1 ||
  status=$?

if ! grep -E '^scenario=' "$OUT"; then
  tail -n 60 "$OUT"
  echo "partitions: no scenario ran" >&2
  exit 1
fi
if [ "$status" -ne 0 ] || grep -qE '^scenario=.*verdict=FAIL' "$OUT"; then
  grep -E '^\s+(lost|stuck|duplicate|send after lapse|split ownership|slow takeover|unlogged send|wrong webhook-id|unknown receipt):' "$OUT" | head -n 40 || true
  grep -E '^(--- FAIL|FAIL)' "$OUT" || true
  # the whole log, for a failure that is not a scenario's verdict (a set-up step that failed, say)
  kept=$(mktemp /tmp/partitions-failed.XXXXXX.log)
  cp "$OUT" "$kept"
  grep -E '^\s+\S+\.go:[0-9]+: ' "$OUT" | grep -v 'scenario=' | head -n 20 || true
  echo "partitions: FAIL (the whole log: $kept)" >&2
  exit 1
fi
echo "partitions: every scenario PASS"
