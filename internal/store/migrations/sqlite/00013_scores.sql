-- +goose Up
-- Score configs define what a score of a name may hold; scores are values (numeric, a
-- category, or a boolean) given to an execution, a trace, a span or a chat session.
CREATE TABLE score_configs (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    data_type     TEXT NOT NULL,
    min_value     REAL,
    max_value     REAL,
    categories    TEXT NOT NULL DEFAULT '[]',
    description   TEXT NOT NULL DEFAULT '',
    archived      INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    UNIQUE (workspace_id, name)
);
CREATE INDEX score_configs_ws_created ON score_configs (workspace_id, created_at DESC, id DESC);

-- Targets are not foreign keys: a score keeps the ids it was given (traces and spans may be
-- ingested with ids of their own, and a chat session may be deleted after it was scored).
CREATE TABLE scores (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    config_id     TEXT REFERENCES score_configs(id),
    data_type     TEXT NOT NULL,
    value         REAL,
    string_value  TEXT,
    execution_id  TEXT,
    trace_id      TEXT,
    span_id       TEXT,
    session_id    TEXT,
    source        TEXT NOT NULL,
    comment       TEXT NOT NULL DEFAULT '',
    author_type   TEXT,
    author_id     TEXT,
    author_name   TEXT,
    metadata      TEXT NOT NULL DEFAULT '{}',
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);
CREATE INDEX scores_ws_created ON scores (workspace_id, created_at DESC, id DESC);
-- The summary groups by name and data type; the name filter uses it too.
CREATE INDEX scores_ws_name ON scores (workspace_id, name, data_type, value, string_value);
CREATE INDEX scores_execution ON scores (workspace_id, execution_id) WHERE execution_id IS NOT NULL;
CREATE INDEX scores_trace ON scores (workspace_id, trace_id, span_id) WHERE trace_id IS NOT NULL;
CREATE INDEX scores_session ON scores (workspace_id, session_id) WHERE session_id IS NOT NULL;
CREATE INDEX scores_config ON scores (config_id) WHERE config_id IS NOT NULL;

-- +goose Down
DROP TABLE scores;
DROP TABLE score_configs;
