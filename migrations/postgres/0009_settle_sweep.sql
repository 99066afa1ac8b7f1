-- The rescuer's sweep for ended series reads active events a page at a
-- time in (expanded_until, id) order; the expander still finds events
-- behind its horizon by expanded_until.
DROP INDEX events_expansion;
CREATE INDEX events_expansion ON events (expanded_until, id) WHERE status = 'active';
