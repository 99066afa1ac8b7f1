-- #37: an event's overlap policy — what an instant does while an earlier
-- run of the event is still in progress (allow | skip | buffer_one |
-- buffer_all | cancel_previous). A constant default is a catalogue change
-- only: no row is rewritten. events_archive keeps events' column list.
ALTER TABLE events ADD COLUMN overlap text NOT NULL DEFAULT 'allow';
ALTER TABLE events_archive ADD COLUMN overlap text NOT NULL DEFAULT 'allow';
