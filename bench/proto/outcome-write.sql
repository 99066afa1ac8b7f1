-- Writes 20,000 outcomes in batches of 256 and prints the time: MODE 1 updates the occurrence row (today),
-- MODE 2 deletes it from the narrow due table instead (a ledger: the attempt row is the outcome).
-- Both insert the attempt row. Run by outcome-write.sh, which substitutes MODE.
DROP TABLE IF EXISTS att;
CREATE TABLE att (id uuid NOT NULL, occurrence_id uuid NOT NULL, event_id uuid NOT NULL, attempt int NOT NULL,
 manual boolean NOT NULL DEFAULT false, started_at timestamptz NOT NULL, duration_ms bigint NOT NULL, status_code int,
 outcome text NOT NULL, error text, response_excerpt text, truncated boolean NOT NULL DEFAULT false,
 lateness_ms bigint NOT NULL DEFAULT 0, endpoint_id uuid, scheduled_at timestamptz NOT NULL, bucket smallint,
 PRIMARY KEY (id, scheduled_at));
CREATE INDEX att_occ ON att (occurrence_id, attempt);
CREATE INDEX att_time ON att (started_at);
CREATE INDEX att_ep ON att (endpoint_id, started_at) WHERE endpoint_id IS NOT NULL;
CREATE TEMP TABLE b AS SELECT (row_number() over (order by next_attempt_at, id) - 1) / 256 AS k, id, event_id FROM occ;
CREATE TEMP TABLE bb AS SELECT k, array_agg(id) ids, array_agg(event_id) evs FROM b GROUP BY k;
DO $$
DECLARE r record; t0 timestamptz := clock_timestamp();
BEGIN
  FOR r IN SELECT ids, evs FROM bb ORDER BY k LOOP
    IF MODE = 1 THEN
      UPDATE occ SET status = 'completed', completed_at = now(), updated_at = now(), attempt_count = 1, status_code = 200,
        started_at = now(), response_body = 'ok', lease_token = NULL WHERE id = ANY(r.ids) AND scheduled_at = '2026-11-29 15:00';
    ELSE
      DELETE FROM due WHERE id = ANY(r.ids);
    END IF;
    INSERT INTO att (id, occurrence_id, event_id, attempt, started_at, duration_ms, status_code, outcome, response_excerpt, scheduled_at, bucket)
      SELECT gen_random_uuid(), u.id, u.ev, 1, now(), 3, 200, 'success', 'ok', '2026-11-29 15:00', 1 FROM unnest(r.ids, r.evs) u(id, ev);
  END LOOP;
  RAISE NOTICE 'ms %', round(extract(epoch from clock_timestamp() - t0) * 1000);
END $$;
