-- Seeds :n completed occurrences, one attempt each, spread evenly over the
-- :days days before now, owned by 1,000 events; by SQL (generate_series), not
-- the API, so millions of rows take minutes. Works on the partitioned layout
-- (migration 0012, partitions ensured first) and on the 0011 layout (the
-- upgrade measurement). Ids are md5-derived, so the attempts need no join.
-- Usage: psql -v n=1000000 -v days=30 -f bench/history-seed.sql
-- -v spread=true spreads the first attempts' lateness (5-64 ms, and one in a
-- hundred up to 5 s) instead of 40 ms each: the punctuality benchmark's
-- histograms then hold the buckets a real installation's do. Each event's
-- rows are every 1,000th (i % 1000), so the terms in i / 1000 are what
-- spread one event's values (all 60, and one row in a hundred of each event
-- slow); without them an event's rows took three values.
\set ON_ERROR_STOP on
\if :{?spread}
\else
\set spread false
\endif
SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()
    AND table_name = 'attempts' AND column_name = 'scheduled_at') AS partitioned \gset
\if :partitioned
SELECT qhronos_ensure_partitions(now() - (:days || ' days')::interval - interval '1 day', now()) AS weeks \gset
\endif
-- The events are series that ended: inactive, their expansion cursor at the
-- end of time (model.SeriesEnd), the state the server leaves them in. Left
-- active with no cursor, the server's first minutes would go to expanding
-- and settling 1,000 events of 50,000 rows each — a seed artifact, not the
-- steady state the benchmarks compare against an empty database.
INSERT INTO events (id, name, start_time, action_type, action, status, expanded_until, created_at, updated_at)
SELECT md5('history-event-' || e)::uuid, 'history ' || e, now() - (:days || ' days')::interval, 'webhook',
    '{"type":"webhook","params":{"url":"http://127.0.0.1:9/history"}}', 'inactive', '9999-12-31 00:00:00+00',
    now() - (:days || ' days')::interval, now() - (:days || ' days')::interval
FROM generate_series(0, 999) e
ON CONFLICT (id) DO NOTHING;
-- i-th row at now - days + i * (days / n), rounded to the millisecond.
CREATE TEMP TABLE history_seed_at AS
SELECT i, date_trunc('milliseconds', now() - (:days || ' days')::interval
    + (i::float8 / :n) * (:days || ' days')::interval - interval '1 hour') AS at
FROM generate_series(1, :n) i;
INSERT INTO occurrences (id, event_id, scheduled_at, status, manual, attempt_count, next_attempt_at, status_code,
    started_at, completed_at, created_at, updated_at)
SELECT md5('history-occurrence-' || i)::uuid, md5('history-event-' || (i % 1000))::uuid, at, 'completed', false, 1, at,
    200, at + interval '40 milliseconds', at + interval '90 milliseconds', at - interval '1 hour',
    at + interval '90 milliseconds'
FROM history_seed_at;
\if :partitioned
INSERT INTO attempts (id, occurrence_id, event_id, attempt, manual, started_at, duration_ms, status_code, outcome,
    truncated, lateness_ms, scheduled_at)
SELECT md5('history-attempt-' || i)::uuid, md5('history-occurrence-' || i)::uuid,
    md5('history-event-' || (i % 1000))::uuid, 1, false, at + interval '40 milliseconds', 50, 200, 'completed',
    false, CASE WHEN :spread THEN 5 + (i::bigint * 7919 + (i / 1000) * 3) % 60
        + CASE WHEN (i + i / 1000) % 100 = 0 THEN (i::bigint * 7) % 5000 ELSE 0 END ELSE 40 END, at
FROM history_seed_at;
\else
INSERT INTO attempts (id, occurrence_id, event_id, attempt, manual, started_at, duration_ms, status_code, outcome,
    truncated, lateness_ms)
SELECT md5('history-attempt-' || i)::uuid, md5('history-occurrence-' || i)::uuid,
    md5('history-event-' || (i % 1000))::uuid, 1, false, at + interval '40 milliseconds', 50, 200, 'completed',
    false, 40
FROM history_seed_at;
\endif
DROP TABLE history_seed_at;
-- This machine's PostgreSQL runs with autovacuum off: without ANALYZE the
-- planner would plan the hot statements against an empty table's estimates.
ANALYZE events;
ANALYZE occurrences;
ANALYZE attempts;
