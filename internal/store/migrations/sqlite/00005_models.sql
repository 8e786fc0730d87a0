-- +goose Up
-- A workspace registers models the built-in catalog lacks (served by vLLM, Ollama, a fine-tune);
-- their ids are the workspace's own, so two workspaces may register the same id.
CREATE TABLE workspace_llm_models (
    workspace_id              TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    id                        TEXT NOT NULL,
    provider                  TEXT NOT NULL,
    name                      TEXT NOT NULL,
    description               TEXT NOT NULL DEFAULT '',
    context_window            INTEGER NOT NULL,
    max_output_tokens         INTEGER NOT NULL,
    input_price_per_million   REAL NOT NULL,
    output_price_per_million  REAL NOT NULL,
    capabilities              TEXT NOT NULL DEFAULT '[]',
    created_at                INTEGER NOT NULL,
    updated_at                INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, id)
);

-- The outcome of the last POST /credentials/{id}/validate.
ALTER TABLE credentials ADD COLUMN valid INTEGER;
ALTER TABLE credentials ADD COLUMN last_validated_at INTEGER;
ALTER TABLE credentials ADD COLUMN validation_message TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE credentials DROP COLUMN validation_message;
ALTER TABLE credentials DROP COLUMN last_validated_at;
ALTER TABLE credentials DROP COLUMN valid;
DROP TABLE workspace_llm_models;
