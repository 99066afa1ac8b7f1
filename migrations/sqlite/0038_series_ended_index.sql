-- #36: the recurring series expanded to their end and not settled yet, for
-- the ended-series sweep (see the PostgreSQL migration of the same number:
-- a one-time event's end is read, never written, so the fully expanded
-- active events are mostly one-time events the sweep must not wade
-- through). The literal is model.SeriesEnd as SQLite stores it; the sweep
-- names it the same way, so that the planner can use the index.
CREATE INDEX events_series_ended ON events (id)
    WHERE status = 'active' AND expanded_until = '9999-12-31T00:00:00.000000Z'
    AND (rrule IS NOT NULL OR schedule IS NOT NULL OR cron IS NOT NULL);
