-- The rescuer's sweep for ended series reads active events whose cursor
-- is at the series end a page at a time in id order; the expander still
-- finds events behind its horizon by expanded_until.
DROP INDEX events_expansion;
CREATE INDEX events_expansion ON events (expanded_until, id) WHERE status = 'active';

-- The notification scanner reports recurring series that ended; one-time
-- events that fired are not indexed for it (one index entry less each).
DROP INDEX events_inactive_changed;
CREATE INDEX events_inactive_changed ON events (updated_at, id)
    WHERE status = 'inactive' AND (rrule IS NOT NULL OR schedule IS NOT NULL OR cron IS NOT NULL);
