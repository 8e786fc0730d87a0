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

-- +goose Down
DROP TABLE evaluators;
DROP TABLE dataset_items;
DROP TABLE datasets;
