-- One Qhronos create as pgbench sees it: the statement internal/repository CreateEventRecorded sends for
-- POST /events of a one-time webhook event with two tags (captured from PostgreSQL's log of a real create,
-- 2026-11-26): the event, its tags, its first history entry and its first occurrence, in one statement with
-- data-modifying CTEs, foreign keys checked at its end, against the real schema (indexes, partitions; the
-- rollup trigger it met until migration 0021). Only the values are generated here instead of bound. Used by bench/targets.sh creates.
-- pgbench reads ":name" as a variable even inside a literal, so the literals holding a colon are written
-- with '~' and turned back by replace(…, '~', chr(58)).
WITH ids AS (SELECT gen_random_uuid() AS e, gen_random_uuid() AS h, gen_random_uuid() AS o,
                    now() AS t, date_trunc('second', now()) + interval '1 hour' AS due),
ev AS (INSERT INTO events (id, name, description, start_time, timezone, rrule, schedule, cron, action_type,
		action, webhook, hmac_secret, previous_secret, previous_secret_expires_at, tags_json, metadata, retry,
		catch_up, timeout_ms, status, last_status, created_by, created_via, version, expanded_until, next_run_at,
		last_run_at, created_at, updated_at, deleted_at, paused_at, paused_until, pause_reason, paused_by,
		pause_catch_up, dst, jitter_ms, calendars, endpoint_id, no_trace_propagation,
		key_scope, event_key, debounce_ms, max_wait_ms, debounce_since)
	SELECT e, 'bench-' || :client_id, '', due, 'UTC', NULL, NULL, NULL, 'webhook',
		replace('{"type"~"webhook","params"~{"url"~"http~//127.0.0.1~18999/hook"}}', '~', chr(58)), replace('http~//127.0.0.1~18999/hook', '~', chr(58)), NULL, NULL, NULL,
		'["qhronos-bench","run-x"]', '{}', NULL, 'all', 0, 'active', '', 'master', 'api', 1, '9999-12-31'::timestamptz, due,
		NULL, t, t, NULL, NULL, NULL, '', '', '', NULL, 0, NULL, NULL, false, NULL, NULL, 0, 0, NULL FROM ids),
tg AS (INSERT INTO event_tags (event_id, tag) SELECT e, x FROM ids, (VALUES ('qhronos-bench'), ('run-x')) v(x)),
hi AS (INSERT INTO event_history (id, event_id, at, subject, channel, action, reason, changes)
	SELECT h, e, t, 'master', 'api', 'create', '',
		replace('{"action"~{"from"~null,"to"~{"type"~"webhook","params"~{"url"~"http~//127.0.0.1~18999/hook"}}},"catch_up"~{"from"~null,"to"~"all"},"name"~{"from"~null,"to"~"bench-1"},"start_time"~{"from"~null,"to"~"2026-11-26T03~47~17Z"},"status"~{"from"~null,"to"~"active"},"tags"~{"from"~null,"to"~["qhronos-bench","run-x"]},"timezone"~{"from"~null,"to"~"UTC"},"webhook"~{"from"~null,"to"~"http~//127.0.0.1~18999/hook"}}', '~', chr(58))
	FROM ids),
oc AS (INSERT INTO occurrences (id, event_id, scheduled_at, status, manual, attempt_count, next_attempt_at,
		created_at, updated_at, reason, original_scheduled_at, error_message, completed_at)
	SELECT o, e, due, 'pending', false, 0, due, t, t, NULL, NULL, NULL, NULL FROM ids)
SELECT 1;
