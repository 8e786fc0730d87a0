-- +goose Up
-- An in-progress Idempotency-Key carries a lease: the process handling its request renews
-- locked_until (Unix ms) while it works, and a retry after the lease ran out (the process
-- died) takes the key over. lock_token names the holder, so a process that lost its lease
-- cannot record a response over its successor's. execution_id is the execution the request
-- created, written in the transaction that created it, so a retry answers from that
-- execution instead of starting a second one.
ALTER TABLE idempotency_keys ADD COLUMN locked_until INTEGER NOT NULL DEFAULT 0;
ALTER TABLE idempotency_keys ADD COLUMN lock_token TEXT NOT NULL DEFAULT '';
ALTER TABLE idempotency_keys ADD COLUMN execution_id TEXT;
-- Requests in progress under an older version get the lease they would have had.
UPDATE idempotency_keys SET locked_until = created_at + 60000 WHERE status = 0;

-- Token buckets shared by every node (rate limits per API key and user, failed logins per
-- email and client address). A SQLite file has one server, which keeps its buckets in
-- memory; the table keeps the schema and the store's methods the same on both dialects.
-- tokens, updated_at and full_at are seconds (Unix, fractional) of the database's clock;
-- granted is what the last take got.
CREATE TABLE rate_buckets (
    key         TEXT PRIMARY KEY,
    tokens      REAL NOT NULL,
    granted     INTEGER NOT NULL,
    updated_at  REAL NOT NULL,
    full_at     REAL NOT NULL
);

-- +goose Down
DROP TABLE rate_buckets;
ALTER TABLE idempotency_keys DROP COLUMN execution_id;
ALTER TABLE idempotency_keys DROP COLUMN lock_token;
ALTER TABLE idempotency_keys DROP COLUMN locked_until;
