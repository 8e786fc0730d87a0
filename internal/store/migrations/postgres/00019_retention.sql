-- +goose Up
-- Retention: the elected leader deletes a workspace's executions (with their frames, trace,
-- spans, approvals, scores and webhook deliveries) and its ingested traces once they are older
-- than retention_days; 0 keeps them forever. A deleted workspace (deleted_at set) answers
-- nothing from then on, and the leader deletes its rows in batches, then the workspace itself.
ALTER TABLE workspaces ADD COLUMN retention_days INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workspaces ADD COLUMN deleted_at BIGINT;
-- The purge's look for deleted workspaces.
CREATE INDEX workspaces_deleted ON workspaces (deleted_at) WHERE deleted_at IS NOT NULL;
-- Ingested traces (no execution) expire on their own; traces of executions go with them.
CREATE INDEX traces_ingested ON traces (workspace_id, created_at) WHERE execution_id IS NULL;

-- +goose Down
DROP INDEX traces_ingested;
DROP INDEX workspaces_deleted;
ALTER TABLE workspaces DROP COLUMN deleted_at;
ALTER TABLE workspaces DROP COLUMN retention_days;
