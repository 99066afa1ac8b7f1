#!/usr/bin/env bash
# Where a burst's CPU goes, by process: qhronosd, PostgreSQL's backends, the bench's receivers (qhronos-bench),
# and the same for the ceiling (e2e, httpsink, postgres), in µs of CPU per delivered row. On a 2-core machine
# the burst is CPU-bound (vmstat: under 10 % idle while it drains), so these are what its rate is made of, and
# they drift less with the machine's speed than the rate itself.
#
# usage: bench/cpu-split.sh qhronos [EVENTS] [DUE_IN_SECONDS]   a burst of EVENTS (default 40000) on one instant
#        bench/cpu-split.sh steady RATE [SECONDS]               RATE occurrences a second, each at its own instant,
#                                                               for SECONDS (default 20): the window is the due span
#        bench/cpu-split.sh ceiling [ROWS]                      ../shared/ceiling/run.sh draining ROWS (200000)
# QHRONOSD / QHRONOS_BENCH pick the binaries (see pg-run.sh). The window: from 1 s before the due instant to
# 6 s after it (the qhronos burst; keep EVENTS so it drains in under 6 s: the server stops when the bench ends), or a 3.5 s slice of the ceiling's drain.
set -u
cd "$(dirname "$0")/.."
snap() { # process name -> user+system ticks, summed over its processes
	for f in /proc/[0-9]*/stat; do awk '{gsub(/[()]/, "", $2); print $2, $14 + $15}' "$f" 2>/dev/null; done |
		awk '{a[$1] += $2} END {for (k in a) print k, a[k]}' | sort
}
A=$(mktemp) B=$(mktemp)
trap 'rm -f "$A" "$B"' EXIT
hz=$(getconf CLK_TCK)
case "${1:-qhronos}" in
qhronos)
	n=${2:-40000} due=${3:-35}
	( sleep $((due - 1)); snap >"$A"; sleep 7; snap >"$B" ) &
	bash bench/pg-run.sh cpu$RANDOM $((20000 + RANDOM % 10000)) -- --mode burst --events "$n" --burst-window 0 \
		--due-in "${due}s" --create-concurrency 32 --receivers 8 --timeout 120s 2>/dev/null | grep -E "deliveries/s|^lost|^duplicates"
	wait ;;
steady)
	rate=${2:?steady needs RATE} secs=${3:-20}
	# creates take 1,000-1,500/s on this machine, slower when it is busy: a creation phase that runs into the
	# window would count its CPU as delivery's, so the run is refused when it did (CREATE_RATE lowers the guess)
	n=$((rate * secs)) due=$((rate * secs / ${CREATE_RATE:-800} + 15))
	( sleep "$due"; snap >"$A"; sleep "$secs"; snap >"$B" ) &
	out=$(bash bench/pg-run.sh cpu$RANDOM $((20000 + RANDOM % 10000)) -- --mode steady --rate "$rate" --duration "${secs}s" \
		--due-in "${due}s" --create-concurrency 32 --receivers 8 --timeout 120s 2>/dev/null)
	wait
	grep -E "deliveries/s|^lost|^duplicates|^lateness|^create rate" <<<"$out"
	created_in=$(grep -oP '^create rate.* over \K[0-9.]+' <<<"$out")
	if [ -z "$created_in" ] || [ "$(python3 -c "print(int($created_in > $due - 1))")" = 1 ]; then
		echo "the creates took ${created_in:-?} s of the ${due} s before the first instant: not a steady window (lower CREATE_RATE)" >&2
		exit 1
	fi ;;
ceiling)
	n=${2:-200000}
	log=$(mktemp)
	( sleep 4; snap >"$A"; sleep 3.5; snap >"$B" ) &
	bash ../shared/ceiling/run.sh "$n" >"$log" 2>&1
	wait
	rate=$(grep -o 'delivered_per_s=[0-9]*' "$log" | cut -d= -f2); rm -f "$log"
	echo "ceiling rows/s $rate"
	n=$(python3 -c "print(int($rate * 3.5))") ;; # rows drained in the window
*) echo "usage: $0 qhronos [EVENTS] [DUE_IN] | steady RATE [SECONDS] | ceiling [ROWS]" >&2; exit 2 ;;
esac
join -o 0,1.2,2.2 "$A" "$B" | grep -v "^kworker" | awk -v n="$n" -v hz="$hz" '{d = $3 - $2; if (d * 100 / hz > 5) printf "%-16s %6.1f µs a row\n", $1, d * 1e6 / hz / n}' | sort -k2 -nr
