-- +goose Up
-- An experiment runs an agent version on every item of a dataset and scores each run with
-- evaluators. Its items are copied when it is created (the dataset's version is recorded), so
-- later edits of the dataset change nothing about it. One node at a time drives it: the one
-- holding its lease (owner_node until lease_expires_at, Unix ms), renewed while it runs; a
-- node that finds the lease expired takes it over.
CREATE TABLE experiments (
    id               TEXT PRIMARY KEY,
    workspace_id     TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name             TEXT NOT NULL DEFAULT '',
    dataset_id       TEXT NOT NULL,
    dataset_version  BIGINT NOT NULL,
    agent_id         TEXT NOT NULL,
    version_id       TEXT NOT NULL,
    evaluator_ids    TEXT NOT NULL DEFAULT '[]',
    concurrency      BIGINT NOT NULL,
    metadata         TEXT NOT NULL DEFAULT '{}',
    status           TEXT NOT NULL,
    error            TEXT,
    total            BIGINT NOT NULL DEFAULT 0,
    completed        BIGINT NOT NULL DEFAULT 0,
    failed           BIGINT NOT NULL DEFAULT 0,
    owner_node       TEXT,
    lease_expires_at BIGINT,
    created_at       BIGINT NOT NULL,
    started_at       BIGINT,
    completed_at     BIGINT,
    updated_at       BIGINT NOT NULL
);
CREATE INDEX experiments_ws_created ON experiments (workspace_id, created_at DESC, id DESC);
-- The runners of every node look for experiments to drive: only unfinished ones.
CREATE INDEX experiments_active ON experiments (lease_expires_at) WHERE status IN ('pending', 'running');

-- One row per item of an experiment. execution_id is set in the transaction that creates
-- the item's execution, only while it is null: an item runs once, whichever node tries.
-- done_seq numbers the items in the order they finished (the id of their stream frame).
CREATE TABLE experiment_items (
    experiment_id    TEXT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
    item_id          TEXT NOT NULL,
    position         BIGINT NOT NULL,
    input            TEXT NOT NULL,
    expected_output  TEXT,
    metadata         TEXT NOT NULL DEFAULT '{}',
    status           TEXT NOT NULL,
    execution_id     TEXT UNIQUE,
    output           TEXT,
    error            TEXT,
    scores           TEXT NOT NULL DEFAULT '{}',
    cost             DOUBLE PRECISION NOT NULL DEFAULT 0,
    total_tokens     BIGINT NOT NULL DEFAULT 0,
    duration_ms      BIGINT,
    done_seq         BIGINT,
    PRIMARY KEY (experiment_id, item_id)
);
CREATE INDEX experiment_items_order ON experiment_items (experiment_id, status, position);
CREATE INDEX experiment_items_done ON experiment_items (experiment_id, done_seq) WHERE done_seq IS NOT NULL;

-- +goose Down
DROP TABLE experiment_items;
DROP TABLE experiments;
