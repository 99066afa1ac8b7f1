-- #36: an owner reads the rows it holds again just before they fire only
-- when something may have changed them since its read (see the PostgreSQL
-- migration). SQLite has one writer and one owner of every bucket: one
-- counter that every such write moves serves.
CREATE TABLE held_changes (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    stamp INTEGER NOT NULL
);
INSERT INTO held_changes (id, stamp) VALUES (1, 0);

CREATE TRIGGER occurrences_held_change AFTER UPDATE ON occurrences FOR EACH ROW
    WHEN OLD.status IN ('pending', 'retrying') AND (
        NEW.scheduled_at IS NOT OLD.scheduled_at
        OR NEW.status = 'dispatching'
        OR NEW.attempt_count < OLD.attempt_count
        OR (NEW.attempt_count = OLD.attempt_count AND (NEW.status IS NOT OLD.status
            OR NEW.next_attempt_at IS NOT OLD.next_attempt_at)))
BEGIN
    UPDATE held_changes SET stamp = stamp + 1;
END;
CREATE TRIGGER occurrences_held_delete AFTER DELETE ON occurrences FOR EACH ROW
    WHEN OLD.status IN ('pending', 'retrying')
BEGIN
    UPDATE held_changes SET stamp = stamp + 1;
END;
CREATE TRIGGER events_held_change AFTER UPDATE ON events FOR EACH ROW
    WHEN NEW.deleted_at IS NOT OLD.deleted_at
        OR (NEW.status <> 'inactive' AND (NEW.status IS NOT OLD.status OR NEW.version <> OLD.version))
BEGIN
    UPDATE held_changes SET stamp = stamp + 1;
END;
CREATE TRIGGER events_held_delete AFTER DELETE ON events FOR EACH ROW
BEGIN
    UPDATE held_changes SET stamp = stamp + 1;
END;
