-- +goose Up
-- Completion webhooks. An agent may name a URL to which each of its executions is POSTed when
-- it ends; webhook_secret is its Standard Webhooks signing secret, sealed with the server's key
-- (secretbox, bound to the workspace and agent id), never stored in the clear.
ALTER TABLE agents ADD COLUMN webhook_url TEXT;
ALTER TABLE agents ADD COLUMN webhook_secret TEXT;

-- The outbox: one row per message (an execution's end, for one receiver), written in the
-- transaction that ends the execution, so none is lost to a crash. Every node's deliverer
-- claims due rows under a lease (lease_owner until lease_expires_at, Unix ms on the database's
-- clock): an attempt is sent by one node only. secret is the receiver's signing secret at the
-- time, sealed and bound to the workspace and delivery id. next_attempt_at is null once the row
-- is delivered or failed; no attempt is scheduled after expires_at (24 hours after the execution
-- ended, or after a manual retry).
CREATE TABLE webhook_deliveries (
    id                  TEXT PRIMARY KEY,
    workspace_id        TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    execution_id        TEXT NOT NULL,
    target_type         TEXT NOT NULL,
    target_id           TEXT NOT NULL,
    url                 TEXT NOT NULL,
    secret              TEXT NOT NULL,
    event_type          TEXT NOT NULL,
    payload             TEXT NOT NULL,
    status              TEXT NOT NULL,
    attempts            BIGINT NOT NULL DEFAULT 0,
    next_attempt_at     BIGINT,
    last_attempt_at     BIGINT,
    last_response_code  BIGINT,
    last_error          TEXT,
    delivered_at        BIGINT,
    lease_owner         TEXT,
    lease_expires_at    BIGINT,
    expires_at          BIGINT NOT NULL,
    created_at          BIGINT NOT NULL,
    updated_at          BIGINT NOT NULL
);
CREATE INDEX webhook_deliveries_ws_created ON webhook_deliveries (workspace_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_execution ON webhook_deliveries (execution_id);
-- Only pending rows are in it: what the deliverers look for.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
-- Settled rows are pruned after a retention period, oldest first.
CREATE INDEX webhook_deliveries_settled ON webhook_deliveries (updated_at) WHERE status <> 'pending';

-- +goose Down
DROP TABLE webhook_deliveries;
ALTER TABLE agents DROP COLUMN webhook_secret;
ALTER TABLE agents DROP COLUMN webhook_url;
