-- An event's earliest waiting occurrence (next_run_at bookkeeping after every
-- expansion and outcome) without reading its whole backlog.
CREATE INDEX occurrences_event_pending ON occurrences (event_id, next_attempt_at)
    WHERE status IN ('pending', 'retrying');
