#!/usr/bin/env bash
# A private PostgreSQL 15 for profiling the benches (BENCHMARKS.md, #16): the shared instance's settings
# (shared_buffers 128 MB, autovacuum off) plus pg_stat_statements and auto_explain (plans of statements over
# 15 ms go to its log). Run a bench against it with PGPORT=55432 bash bench/pg-run.sh …
# usage: pg-profile.sh start | reset | top [N] | stop      (run as root; the cluster runs as postgres)
set -eu
D=${PGPROFILE_DIR:-/tmp/pgprof}; PORT=55432; BIN=/usr/lib/postgresql/15/bin
psqlp() { psql -h 127.0.0.1 -p $PORT -U postgres "$@"; }
case "${1:-}" in
  start)
    if [ ! -d "$D" ]; then
      mkdir -p "$D" && chown postgres "$D"
      su postgres -c "$BIN/initdb -D $D -A trust -U postgres" >/dev/null
      cat >> "$D/postgresql.conf" <<CONF
port = $PORT
listen_addresses = '127.0.0.1'
unix_socket_directories = '/tmp'
shared_buffers = 128MB
autovacuum = off
shared_preload_libraries = 'pg_stat_statements,auto_explain'
pg_stat_statements.track = all
auto_explain.log_min_duration = '15ms'
CONF
    fi
    su postgres -c "$BIN/pg_ctl -D $D status" >/dev/null || su postgres -c "$BIN/pg_ctl -D $D -l $D/log -w start" >/dev/null
    # planning counts as statement time (#36, eighth step), also on a cluster made or started before this line
    psqlp -qc "ALTER SYSTEM SET pg_stat_statements.track_planning = on" -qc "SELECT pg_reload_conf()" >/dev/null
    psqlp -qc "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" ;;
  reset) psqlp -qAtc "SELECT pg_stat_statements_reset()" >/dev/null ;;
  # Statement time (planning included) grouped by the statement's first 45 characters and the table it writes (the
  # outcome update and the bookkeeping's open alike and were one entry before), batches of different sizes
  # are separate entries, with time per row.
  top) psqlp -P pager=off -c "SELECT round(sum(total_exec_time + total_plan_time)::numeric) AS ms, sum(calls) AS calls,
         sum(rows) AS rows, round((sum(total_exec_time + total_plan_time) / greatest(sum(rows), 1))::numeric, 3) AS ms_per_row, k
       FROM (SELECT *, left(q, 45) || coalesce(' … ' || substring(q from '(?:UPDATE|INSERT INTO|DELETE FROM) \w+'), '') AS k
             FROM (SELECT *, regexp_replace(query, '\s+', ' ', 'g') AS q FROM pg_stat_statements) p
             WHERE query NOT LIKE '%pg_stat_statements%') s
       GROUP BY k ORDER BY 1 DESC LIMIT ${2:-16}" ;;
  stop) su postgres -c "$BIN/pg_ctl -D $D -m fast stop" >/dev/null ;;
  *) echo "usage: $0 start|reset|top [N]|stop" >&2; exit 2 ;;
esac
