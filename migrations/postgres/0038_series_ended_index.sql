-- #36: a one-time event's end is read, never written (EventEnds in
-- internal/repository/event_ends.go): a delivered one-time event stays
-- 'active' and expanded to the end of its series until it is archived.
-- The ended-series sweep (SettleEndedEvents) paged through every fully
-- expanded active event along events_expansion; that range now holds every
-- one-time event of the retention, and the sweep would take hours to come
-- back to a recurring series. It reads this index instead: the recurring
-- series expanded to their end and not settled yet, normally a handful.
-- One-time events never enter it, so it costs their creation nothing.
-- The literal is model.SeriesEnd; the sweep names it the same way, so
-- that the planner can use the index.
CREATE INDEX events_series_ended ON events (id)
    WHERE status = 'active' AND expanded_until = '9999-12-31 00:00:00+00'
    AND (rrule IS NOT NULL OR schedule IS NOT NULL OR cron IS NOT NULL);
