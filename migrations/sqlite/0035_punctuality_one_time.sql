-- #36: a one-time event's fresh punctuality rows (width 'o') are folded
-- into one row of its hour, read by hourly and daily reports alike, instead
-- of a row for its hour and one for its day (see the PostgreSQL migration).
ALTER TABLE punctuality_fresh ADD COLUMN width TEXT NOT NULL DEFAULT 'h';
