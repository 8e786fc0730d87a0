-- +goose Up
-- An item whose execution was interrupted (its node stopped after the run's first model call,
-- so its answer never reached the platform) runs again as a new execution: attempts counts an
-- item's executions (at most domain.ItemMaxAttempts), and experiment_item_retries keeps the
-- executions an item left behind, so that the experiment's executions are still all listed.
ALTER TABLE experiment_items ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
UPDATE experiment_items SET attempts = 1 WHERE execution_id IS NOT NULL;
CREATE TABLE experiment_item_retries (
    execution_id  TEXT PRIMARY KEY,
    experiment_id TEXT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
    item_id       TEXT NOT NULL
);
CREATE INDEX experiment_item_retries_experiment ON experiment_item_retries (experiment_id);

-- +goose Down
DROP TABLE experiment_item_retries;
ALTER TABLE experiment_items DROP COLUMN attempts;
