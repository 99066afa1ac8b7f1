-- An event may opt out of sending traceparent to its receivers (#26).
ALTER TABLE events ADD COLUMN no_trace_propagation INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events_archive ADD COLUMN no_trace_propagation INTEGER NOT NULL DEFAULT 0;
