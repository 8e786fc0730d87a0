-- +goose Up
-- Runs have owners and leases. A running execution belongs to one node (owner_node) until
-- lease_expires_at (Unix ms, the database's clock); the node renews the leases of all its runs
-- by heartbeat, and the elected leader rescues runs whose lease expired: re-queued when the pass
-- never reached a model call (model_called), else failed as interrupted. attempt counts the
-- passes that took the row (a claim, a start, a resume) and fences writes of a pass that lost its
-- lease. seq_reserved is the highest SSE frame id a pass may have sent: a pass reserves ids in
-- blocks before sending them, so frames written after a crash go above every id a client saw.
ALTER TABLE executions ADD COLUMN owner_node TEXT;
ALTER TABLE executions ADD COLUMN lease_expires_at INTEGER;
ALTER TABLE executions ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
ALTER TABLE executions ADD COLUMN model_called INTEGER NOT NULL DEFAULT 0;
ALTER TABLE executions ADD COLUMN seq_reserved INTEGER NOT NULL DEFAULT 0;
-- Only running rows are in it: the heartbeat finds a node's runs, the rescuer the expired ones.
CREATE INDEX executions_running ON executions (owner_node) WHERE status = 'running';
-- Unfinished executions of older versions start their frame ids above what they stored.
UPDATE executions SET seq_reserved = COALESCE((SELECT MAX(seq_to) FROM execution_events ev WHERE ev.execution_id = executions.id), 0)
    WHERE status IN ('pending', 'running', 'awaiting_approval');
-- Older versions unlocked every session at start-up; a lock held by an execution that has
-- ended is released here once, since nothing else would.
UPDATE chat_sessions SET active_execution_id = NULL WHERE active_execution_id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM executions x WHERE x.id = chat_sessions.active_execution_id
        AND x.status IN ('pending', 'running', 'awaiting_approval'));

-- +goose Down
DROP INDEX executions_running;
ALTER TABLE executions DROP COLUMN seq_reserved;
ALTER TABLE executions DROP COLUMN model_called;
ALTER TABLE executions DROP COLUMN attempt;
ALTER TABLE executions DROP COLUMN lease_expires_at;
ALTER TABLE executions DROP COLUMN owner_node;
