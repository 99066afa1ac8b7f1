#!/usr/bin/env bash
# The performance targets of BENCHMARKS.md ("#16: … where each target stands"), one command each.
# usage: bench/targets.sh burst|within1s|steady|million|sqlite|creates
# Build first: go build -o /tmp/qhronosd ./cmd/qhronosd && go build -o /tmp/qhronos-bench ./cmd/qhronos-bench
# PGPORT selects another PostgreSQL (see pg-run.sh); the server, database, Redis, bench and receivers share the
# machine, as in the recorded figures.
set -u
cd "$(dirname "$0")/.."
common=(--create-concurrency 32 --receivers 8)
case "${1:-}" in
  burst)    # 20,000 on one instant: >= 10,000 deliveries/s, every attempt recorded
    bash bench/pg-run.sh t_burst 18201 -- --events 20000 --burst-window 0 --due-in 20s "${common[@]}" ;;
  within1s) # 10,000 due within one second: p99 lateness <= 500 ms, 0 duplicates
    bash bench/pg-run.sh t_within 18202 -- --events 10000 --burst-window 1s --due-in 20s "${common[@]}" ;;
  steady)   # 5,000/s for 60 s (300,000 created ahead): p50 <= 5 ms, p99 <= 25 ms
    bash bench/pg-run.sh t_steady 18203 -- --mode steady --rate 5000 --duration 60s --due-in 100s "${common[@]}" ;;
  million)  # 1,000,000 due in one second, created ahead through the API (about 6 min at 3,200/s): 0 lost,
            # 0 duplicates, RSS <= 300 MB, GET /events/{id} p99 <= 100 ms during the drain
    bash bench/pg-run.sh t_million 18204 -- --events 1000000 --burst-window 0 --due-in 360s "${common[@]}" \
      --probe-rate 20 --timeout 900s ;;
  sqlite)   # embedded SQLite: 10,000 on one instant >= 6,000/s
    bash bench/embedded-run.sh 18205 -- --events 10000 --burst-window 0 --due-in 20s "${common[@]}" ;;
  creates)  # creates >= 5,000/s on PostgreSQL with p99 <= 50 ms (in process, real HTTP on loopback)
    QHRONOS_TEST_DATABASE_URL=${QHRONOS_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:${PGPORT:-5432}/postgres?sslmode=disable} \
      go test ./internal/api -run '^$' -bench 'BenchmarkCreateEvent/postgres' -benchtime 30s ;;
  *) echo "usage: $0 burst|within1s|steady|million|sqlite|creates" >&2; exit 2 ;;
esac
