-- #36: a one-time event's delivery is counted in one punctuality row, of
-- width 'o' (its hour, read by hourly and daily reports alike), which the
-- outcome statement adds to directly. Before, it went through a fresh row
-- that the compactor folded into a row for its hour and one for its day:
-- three row writes and a delete for one delivery, the largest statement
-- time of a steady minute of one-time events. A recurring event's many
-- instants an hour still go through the fresh rows and the fold.
COMMENT ON COLUMN punctuality_rollups.width IS
    'h: an event''s hour; d: its UTC day; o: a one-time event''s hour, read for days too';
