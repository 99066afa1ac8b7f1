-- What an operator reads after the fact (issue #25): an endpoint's circuit
-- transitions and the notices sent to each notification channel. Both are
-- small, plain tables bounded per owner (the newest 200 rows of each
-- endpoint or channel are kept, trimmed when a row is added), so they need
-- neither partitions nor the archiver.

-- One circuit transition of an endpoint, written in the transaction that
-- changed its health: opened, reopened (a trial failed), closed (a trial
-- succeeded), disabled (open too long, or by a user), enabled (by a user).
-- subject and channel name the user for user actions ('' for the breaker).
CREATE TABLE endpoint_circuit_history (
    id                   uuid PRIMARY KEY,
    endpoint_id          uuid        NOT NULL REFERENCES endpoints (id),
    at                   timestamptz NOT NULL,
    change               text        NOT NULL,
    from_state           text        NOT NULL,
    to_state             text        NOT NULL,
    reason               text        NOT NULL DEFAULT '',
    consecutive_failures integer     NOT NULL DEFAULT 0,
    subject              text        NOT NULL DEFAULT '',
    channel              text        NOT NULL DEFAULT ''
);
CREATE INDEX endpoint_circuit_history_listing ON endpoint_circuit_history (endpoint_id, at DESC, id DESC);

-- One notice sent to one stored channel (a test included) and how it went:
-- delivered or failed, with the receiver's answer (HTTP status, mail
-- server reply) or the error. Rows go with their channel.
CREATE TABLE notification_notices (
    id         uuid PRIMARY KEY,
    channel_id uuid        NOT NULL,
    at         timestamptz NOT NULL,
    kind       text        NOT NULL,
    summary    text        NOT NULL DEFAULT '',
    outcome    text        NOT NULL,
    answer     text        NOT NULL DEFAULT '',
    test       boolean     NOT NULL DEFAULT false
);
CREATE INDEX notification_notices_listing ON notification_notices (channel_id, at DESC, id DESC);
