-- #36: the code reads unfinished (queued_occurrences: the due read's
-- columns) and ended occurrences through these views.
-- On PostgreSQL they join narrow mirror tables to occurrences, so that an
-- outcome's update is HOT (see the PostgreSQL migration); SQLite has no such
-- updates, and the views are filters of occurrences that its partial
-- indexes (occurrences_due, occurrences_leased, occurrences_ended_listing…)
-- still serve.
CREATE VIEW unfinished_occurrences AS
SELECT * FROM occurrences WHERE status IN ('pending', 'retrying', 'dispatching', 'awaiting_ack', 'running');
CREATE VIEW queued_occurrences AS
SELECT * FROM occurrences WHERE status IN ('pending', 'retrying', 'dispatching', 'awaiting_ack', 'running');
CREATE VIEW ended_occurrences AS
SELECT * FROM occurrences WHERE status IN ('failed', 'missed', 'cancelled', 'skipped', 'timed_out');
