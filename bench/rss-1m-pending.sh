#!/usr/bin/env bash
set -u
DB=bench_rss; PORT=18120; D=$(mktemp -d)
psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $DB" -qc "CREATE DATABASE $DB" >/dev/null
URL="postgres://postgres@127.0.0.1:5432/$DB?sslmode=disable"
export QHRONOS_DATABASE_URL=$URL QHRONOS_REDIS_URL=redis://127.0.0.1:6379/0 QHRONOS_REDIS_PREFIX=bench-rss-$$: \
 QHRONOS_AUTH_MASTER_TOKEN=$(openssl rand -hex 32) QHRONOS_AUTH_JWT_SECRET=$(openssl rand -hex 32) \
 QHRONOS_HMAC_DEFAULT_SECRET=$(openssl rand -hex 32) QHRONOS_SECRETS_ENCRYPTION_KEY=$(openssl rand -hex 32) \
 QHRONOS_OUTBOUND_ALLOW_CIDRS=127.0.0.0/8 QHRONOS_LOG_LEVEL=warn
/tmp/qhronosd migrate --data-dir $D/data
psql -h 127.0.0.1 -U postgres -d $DB -q <<SQL
INSERT INTO events (id, name, start_time, timezone, rrule, action_type, action, webhook, status, created_at, updated_at, expanded_until, tags_json)
SELECT gen_random_uuid(), 'rss-'||g, now() + interval '1 minute', 'UTC', 'FREQ=MINUTELY;INTERVAL=2', 'webhook',
  '{"type":"webhook","params":{"url":"http://127.0.0.1:9/x"}}', 'http://127.0.0.1:9/x', 'active', now(), now(), now() + interval '48 hours', '["rss"]'
FROM generate_series(1, 1000) g;
INSERT INTO occurrences (id, event_id, scheduled_at, status, attempt_count, next_attempt_at, created_at, updated_at)
SELECT gen_random_uuid(), e.id, now() + interval '1 hour' + (k * interval '2 minutes'), 'pending', 0,
  now() + interval '1 hour' + (k * interval '2 minutes'), now(), now()
FROM events e CROSS JOIN generate_series(0, 999) k;
ANALYZE;
SQL
psql -h 127.0.0.1 -U postgres -d $DB -tAc "select count(*) from occurrences where status='pending'"
/tmp/qhronosd --addr 127.0.0.1:$PORT --data-dir $D/data > $D/server.log 2>&1 &
SPID=$!
for i in $(seq 1 50); do curl -sf http://127.0.0.1:$PORT/ready >/dev/null && break; sleep 0.2; done
for t in 5 15 30; do sleep $((t==5?5:t==15?10:15)); echo "after ${t}s: $(grep VmRSS /proc/$SPID/status) $(grep VmHWM /proc/$SPID/status)"; done
curl -s -H "Authorization: Bearer $QHRONOS_AUTH_MASTER_TOKEN" "http://127.0.0.1:$PORT/occurrences?limit=500" -o /dev/null -w "list 500: %{http_code}\n"
curl -s -H "Authorization: Bearer $QHRONOS_AUTH_MASTER_TOKEN" "http://127.0.0.1:$PORT/stats" -o /dev/null -w "stats: %{http_code} %{time_total}s\n"
echo "after requests: $(grep VmRSS /proc/$SPID/status) $(grep VmHWM /proc/$SPID/status)"
kill $SPID; wait $SPID 2>/dev/null
psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $DB" >/dev/null
tail -3 $D/server.log
