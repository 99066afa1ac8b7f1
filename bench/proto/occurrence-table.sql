-- The occurrence table of a prototype (#36, eighth step): -v old=1 with today's indexes, old=0 with only
-- the indexes a finish does not change and a narrow due table kept by a trigger; -v ff sets the fillfactor.
-- 20,000 rows pending on one instant. Run by outcome-write.sh.
DROP TABLE IF EXISTS occ, due CASCADE;
CREATE TABLE occ (id uuid NOT NULL, event_id uuid NOT NULL, scheduled_at timestamptz NOT NULL, status text NOT NULL,
 manual boolean NOT NULL DEFAULT false, attempt_count int NOT NULL DEFAULT 0, next_attempt_at timestamptz NOT NULL,
 lease_token text, lease_owner text, lease_expires_at timestamptz, status_code int, response_body text, error_message text,
 started_at timestamptz, completed_at timestamptz, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL,
 manual_retry boolean NOT NULL DEFAULT false, acked_at timestamptz, reason text, original_scheduled_at timestamptz,
 lapses int NOT NULL DEFAULT 0, bucket smallint, PRIMARY KEY (id, scheduled_at)) WITH (fillfactor = :ff);
CREATE UNIQUE INDEX occ_ei ON occ (event_id, scheduled_at);
CREATE INDEX occ_listing ON occ (scheduled_at DESC, id DESC);
\if :old
CREATE INDEX occ_due ON occ (next_attempt_at) WHERE status IN ('pending','retrying');
CREATE INDEX occ_ep ON occ (event_id, next_attempt_at) WHERE status IN ('pending','retrying');
CREATE INDEX occ_leased ON occ (lease_expires_at) WHERE status IN ('dispatching','awaiting_ack');
CREATE INDEX occ_term ON occ (updated_at) WHERE status IN ('completed','failed','missed','cancelled','skipped');
CREATE INDEX occ_ended ON occ (status, scheduled_at DESC, id DESC) WHERE status IN ('failed','missed','cancelled','skipped');
\else
CREATE INDEX occ_leased ON occ (lease_expires_at) WHERE lease_expires_at IS NOT NULL;
CREATE TABLE due (id uuid PRIMARY KEY, scheduled_at timestamptz NOT NULL, event_id uuid NOT NULL, next_attempt_at timestamptz NOT NULL, bucket smallint);
CREATE INDEX due_next ON due (next_attempt_at);
CREATE INDEX due_event ON due (event_id, next_attempt_at);
CREATE FUNCTION keep_due() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' AND OLD.status IN ('pending','retrying') AND (TG_OP = 'DELETE' OR NEW.status NOT IN ('pending','retrying')) THEN
    DELETE FROM due WHERE id = OLD.id;
  ELSIF TG_OP <> 'DELETE' AND NEW.status IN ('pending','retrying') THEN
    INSERT INTO due VALUES (NEW.id, NEW.scheduled_at, NEW.event_id, NEW.next_attempt_at, NEW.bucket)
      ON CONFLICT (id) DO UPDATE SET next_attempt_at = EXCLUDED.next_attempt_at;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER occ_due AFTER INSERT OR DELETE OR UPDATE OF status, next_attempt_at ON occ FOR EACH ROW
  WHEN (pg_trigger_depth() = 0) EXECUTE FUNCTION keep_due();
\endif
INSERT INTO occ (id, event_id, scheduled_at, status, next_attempt_at, created_at, updated_at, bucket)
SELECT gen_random_uuid(), gen_random_uuid(), '2026-11-29 15:00', 'pending', '2026-11-29 15:00', now(), now(), (g % 1024)
FROM generate_series(1, 20000) g;
VACUUM ANALYZE occ;
