#!/usr/bin/env bash
# Times the reads a user opens first against a running qhronosd, and prints
# p50/p99 per route (#24 "Reads with history"):
#
#   bench/history-reads.sh DB_URL SERVER_URL TOKEN
#
# DB_URL (PostgreSQL, read with psql) only picks the newest occurrence and
# its event (for /events/{id}/occurrences and the console's event and
# occurrence pages) and reports how much history the database holds;
# nothing is written. TOKEN is the master token (the console signs in with
# it). REQUESTS (default 20) requests per route, after one warm-up request.
set -euo pipefail
DB_URL=${1:?usage: history-reads.sh DB_URL SERVER_URL TOKEN}
SERVER=${2:?usage: history-reads.sh DB_URL SERVER_URL TOKEN}
TOKEN=${3:?usage: history-reads.sh DB_URL SERVER_URL TOKEN}
N=${REQUESTS:-20}
SERVER=${SERVER%/}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

occ=$(psql "$DB_URL" -Atc "SELECT reltuples::bigint FROM pg_class WHERE relname = 'occurrences'")
att=$(psql "$DB_URL" -Atc "SELECT reltuples::bigint FROM pg_class WHERE relname = 'attempts'")
read -r event occurrence < <(psql "$DB_URL" -AtF " " -c "SELECT event_id, id FROM occurrences ORDER BY scheduled_at DESC LIMIT 1") || true
echo "history: ~$occ occurrences, ~$att attempts (planner estimates); $N requests per route; $(date -u +%FT%TZ)"

# The console signs in like a browser: the login form's pre-session cookie
# and CSRF token, then the token.
jar=$WORK/jar
csrf=$(curl -fsS -c "$jar" "$SERVER/ui/login" | sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p' | head -n1)
curl -fsS -b "$jar" -c "$jar" -o /dev/null --data-urlencode "token=$TOKEN" --data-urlencode "csrf=$csrf" \
	"$SERVER/ui/login"

# time_route NAME PATH [console]: N timed GETs after a warm-up; fails on a
# non-2xx answer so that an error never passes for a fast read.
time_route() {
	local name=$1 path=$2 auth=(-H "Authorization: Bearer $TOKEN")
	if [[ ${3:-} == console ]]; then auth=(-b "$jar"); fi
	curl -fsS "${auth[@]}" -o /dev/null "$SERVER$path"
	: >"$WORK/t"
	for _ in $(seq "$N"); do
		curl -fsS "${auth[@]}" -o /dev/null -w '%{time_total}\n' "$SERVER$path" >>"$WORK/t"
	done
	sort -n "$WORK/t" | awk -v name="$name" '{ v[NR] = $1 * 1000 }
		END { p50 = v[int((NR * 50 + 99) / 100)]; p99 = v[int((NR * 99 + 99) / 100)]
		      printf "| %-44s | %8.1f | %8.1f |\n", name, p50, p99 }'
}

printf "| %-44s | %8s | %8s |\n|---|---:|---:|\n" "route" "p50 ms" "p99 ms"
time_route "GET /occurrences?limit=50" "/occurrences?limit=50"
time_route "GET /occurrences?status=completed&limit=50" "/occurrences?status=completed&limit=50"
time_route "GET /occurrences?page=2&limit=50" "/occurrences?page=2&limit=50"
time_route "GET /occurrences?status=failed&limit=50" "/occurrences?status=failed&limit=50"
time_route "GET /stats" "/stats"
time_route "GET /stats?by_action=false" "/stats?by_action=false"
time_route "GET /stats/timeline" "/stats/timeline"
if [[ -n $event ]]; then # an empty database has no event to read
	time_route "GET /events/{id}/occurrences" "/events/$event/occurrences"
fi
time_route "GET /events" "/events"
time_route "GET /status" "/status"
time_route "GET /ui/ (console overview)" "/ui/" console
time_route "GET /ui/events (console)" "/ui/events" console
time_route "GET /ui/failures (console)" "/ui/failures" console
if [[ -n $event ]]; then
	time_route "GET /ui/events/{id} (console)" "/ui/events/$event" console
	time_route "GET /ui/occurrences/{id} (console)" "/ui/occurrences/$occurrence" console
fi
