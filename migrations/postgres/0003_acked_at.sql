-- A WebSocket client may acknowledge a frame before the dispatcher has
-- recorded the delivery; the early acknowledgement is kept here and turns the
-- recorded outcome into completed.
ALTER TABLE occurrences ADD COLUMN acked_at timestamptz;
ALTER TABLE occurrences_archive ADD COLUMN acked_at timestamptz;
