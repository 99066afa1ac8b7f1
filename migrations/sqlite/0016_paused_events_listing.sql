-- The overview counts paused events with GET /events?status=paused, newest
-- first. Paused events are few among many active ones, so without this the
-- listing walks events_listing (or the whole table) filtering out every
-- active row; with it the listing reads only paused rows, already in order.
CREATE INDEX events_paused_listing ON events (created_at DESC, id DESC)
    WHERE status = 'paused' AND deleted_at IS NULL;
