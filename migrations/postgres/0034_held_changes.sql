-- #36: an owner reads the rows it holds again just before they fire only
-- where something may have changed them since its read. Every write that
-- can stop or move a held row (a cancel, skip or move of a waiting
-- occurrence, a pause, edit or delete of its event, an old instance's
-- claim) notes its bucket and its transaction here; the owner's own
-- outcomes (which count the attempt) and the bookkeeping that ends a
-- series (which changes nothing a held row fires on) note nothing. The
-- owner keeps the snapshot of its read and asks which of its buckets have a
-- note its snapshot does not see: one probe of a small index per window
-- instead of a read of every row (a tenth of the database's work under
-- steady load). A note is a row of its own, never an update of a shared
-- counter: writers of one bucket do not wait for each other, and a batch
-- across buckets cannot deadlock on them. Notes every owner's snapshot
-- sees are pruned (PruneHeldChanges).
CREATE TABLE held_changes (
    bucket smallint NOT NULL,
    xid    xid8     NOT NULL,
    PRIMARY KEY (bucket, xid)
);

CREATE FUNCTION qhronos_note_held_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO held_changes (bucket, xid) VALUES (OLD.bucket, pg_current_xact_id()) ON CONFLICT DO NOTHING;
    ELSE
        INSERT INTO held_changes (bucket, xid) VALUES (NEW.bucket, pg_current_xact_id()) ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END $$;

-- A waiting row changed by anyone but its owner: its owner's outcome
-- counts the attempt it read (attempt_count goes up by one) and leaves
-- scheduled_at alone. An old instance's claim counts an attempt too, but
-- makes the row dispatching. A row moved to another week's slice is
-- deleted from its own: the delete trigger notes it.
CREATE TRIGGER occurrences_held_change AFTER UPDATE ON occurrences FOR EACH ROW
    WHEN (OLD.status IN ('pending', 'retrying') AND (
        NEW.scheduled_at IS DISTINCT FROM OLD.scheduled_at
        OR NEW.status = 'dispatching'
        OR NEW.attempt_count < OLD.attempt_count
        OR (NEW.attempt_count = OLD.attempt_count AND (NEW.status IS DISTINCT FROM OLD.status
            OR NEW.next_attempt_at IS DISTINCT FROM OLD.next_attempt_at))))
    EXECUTE FUNCTION qhronos_note_held_change();
CREATE TRIGGER occurrences_held_delete AFTER DELETE ON occurrences FOR EACH ROW
    WHEN (OLD.status IN ('pending', 'retrying'))
    EXECUTE FUNCTION qhronos_note_held_change();

-- An event paused, resumed, edited or deleted. A series that ended (or a
-- one-time event that fired) becomes inactive: that stops nothing.
CREATE TRIGGER events_held_change AFTER UPDATE ON events FOR EACH ROW
    WHEN (NEW.deleted_at IS DISTINCT FROM OLD.deleted_at
        OR (NEW.status <> 'inactive' AND (NEW.status IS DISTINCT FROM OLD.status OR NEW.version <> OLD.version)))
    EXECUTE FUNCTION qhronos_note_held_change();
CREATE TRIGGER events_held_delete AFTER DELETE ON events FOR EACH ROW
    EXECUTE FUNCTION qhronos_note_held_change();
