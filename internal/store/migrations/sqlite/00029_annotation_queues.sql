-- +goose Up
-- Annotation queues: executions waiting for people to score them under the queue's score
-- configs. A reviewer claims the next pending item for a while; completing it writes the
-- scores (source annotation) and marks the item done.
CREATE TABLE annotation_queues (
    id               TEXT PRIMARY KEY,
    workspace_id     TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name             TEXT NOT NULL,
    description      TEXT NOT NULL DEFAULT '',
    score_config_ids TEXT NOT NULL DEFAULT '[]',
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    UNIQUE (workspace_id, name)
);
CREATE INDEX annotation_queues_ws_created ON annotation_queues (workspace_id, created_at DESC, id DESC);

-- An item goes with its execution (retention, deletion) and its queue.
CREATE TABLE annotation_items (
    id               TEXT PRIMARY KEY,
    workspace_id     TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    queue_id         TEXT NOT NULL REFERENCES annotation_queues(id) ON DELETE CASCADE,
    execution_id     TEXT NOT NULL REFERENCES executions(id) ON DELETE CASCADE,
    status           TEXT NOT NULL DEFAULT 'pending',
    claimed_by       TEXT,
    claimed_by_name  TEXT,
    claim_expires_at BIGINT,
    completed_by     TEXT,
    completed_by_name TEXT,
    completed_at     BIGINT,
    created_at       BIGINT NOT NULL,
    UNIQUE (queue_id, execution_id)
);
-- The queue's list (newest first) and the next pending item (oldest first) walk this index.
CREATE INDEX annotation_items_queue ON annotation_items (queue_id, status, created_at, id);
CREATE INDEX annotation_items_execution ON annotation_items (execution_id);

-- +goose Down
DROP TABLE annotation_items;
DROP TABLE annotation_queues;
