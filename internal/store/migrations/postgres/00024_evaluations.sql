-- +goose Up
-- Datasets are named sets of test cases (items) to run agents on. version counts every change
-- to the items, so an experiment can record which state of the dataset it ran; item_count is
-- kept with it in the same statement as each change.
CREATE TABLE datasets (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    description   TEXT NOT NULL DEFAULT '',
    metadata      TEXT NOT NULL DEFAULT '{}',
    input_schema  TEXT,
    item_count    BIGINT NOT NULL DEFAULT 0,
    version       BIGINT NOT NULL DEFAULT 0,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    UNIQUE (workspace_id, name)
);
CREATE INDEX datasets_ws_created ON datasets (workspace_id, created_at DESC, id DESC);

-- source_execution_id is not a foreign key: an item keeps the id of the run it was made
-- from after that run is deleted by retention.
CREATE TABLE dataset_items (
    id                   TEXT PRIMARY KEY,
    workspace_id         TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    dataset_id           TEXT NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    input                TEXT NOT NULL,
    expected_output      TEXT,
    metadata             TEXT NOT NULL DEFAULT '{}',
    source_execution_id  TEXT,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL
);
CREATE INDEX dataset_items_ds_created ON dataset_items (dataset_id, created_at DESC, id DESC);

-- Evaluators score a run's output: deterministic checks or a model acting as judge. A score
-- is written under score_config_id (checked against it) or by score_name and data_type.
CREATE TABLE evaluators (
    id               TEXT PRIMARY KEY,
    workspace_id     TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name             TEXT NOT NULL,
    description      TEXT NOT NULL DEFAULT '',
    type             TEXT NOT NULL,
    config           TEXT NOT NULL DEFAULT '{}',
    score_name       TEXT NOT NULL,
    score_config_id  TEXT REFERENCES score_configs(id),
    data_type        TEXT NOT NULL,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    UNIQUE (workspace_id, name)
);
CREATE INDEX evaluators_ws_created ON evaluators (workspace_id, created_at DESC, id DESC);

-- Annotation queues hold executions for people to score under the queue's score configs. An
-- item is pending, claimed by one reviewer until claim_expires_at (Unix ms), or completed.
CREATE TABLE annotation_queues (
    id                TEXT PRIMARY KEY,
    workspace_id      TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name              TEXT NOT NULL,
    description       TEXT NOT NULL DEFAULT '',
    score_config_ids  TEXT NOT NULL DEFAULT '[]',
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    UNIQUE (workspace_id, name)
);
CREATE INDEX annotation_queues_ws_created ON annotation_queues (workspace_id, created_at DESC, id DESC);

CREATE TABLE annotation_items (
    id                TEXT PRIMARY KEY,
    workspace_id      TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    queue_id          TEXT NOT NULL REFERENCES annotation_queues(id) ON DELETE CASCADE,
    execution_id      TEXT NOT NULL,
    status            TEXT NOT NULL,
    claimed_by        TEXT,
    claim_expires_at  BIGINT,
    completed_at      BIGINT,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    UNIQUE (queue_id, execution_id)
);
CREATE INDEX annotation_items_queue_created ON annotation_items (queue_id, created_at DESC, id DESC);
CREATE INDEX annotation_items_next ON annotation_items (queue_id, status, created_at, id);

-- +goose Down
DROP TABLE annotation_items;
DROP TABLE annotation_queues;
DROP TABLE evaluators;
DROP TABLE dataset_items;
DROP TABLE datasets;
