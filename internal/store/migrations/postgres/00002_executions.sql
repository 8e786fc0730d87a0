-- +goose Up
CREATE TABLE executions (
    id                TEXT PRIMARY KEY,
    workspace_id      TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    agent_id          TEXT NOT NULL,
    agent_version_id  TEXT,
    parent_id         TEXT,
    root_id           TEXT NOT NULL,
    session_id        TEXT,
    source            TEXT NOT NULL,
    status            TEXT NOT NULL,
    input             TEXT NOT NULL DEFAULT '{}',
    output            TEXT,
    error             TEXT,
    metadata          TEXT NOT NULL DEFAULT '{}',
    config            TEXT,
    state             TEXT,
    prompt_tokens     BIGINT NOT NULL DEFAULT 0,
    completion_tokens BIGINT NOT NULL DEFAULT 0,
    cost              DOUBLE PRECISION NOT NULL DEFAULT 0,
    duration_ms       BIGINT,
    trace_id          TEXT NOT NULL,
    timeout_ms        BIGINT NOT NULL DEFAULT 300000,
    created_at        BIGINT NOT NULL,
    started_at        BIGINT,
    completed_at      BIGINT,
    updated_at        BIGINT NOT NULL
);
CREATE INDEX executions_ws_created ON executions (workspace_id, created_at DESC, id DESC);
-- Partial indexes: most runs are never queued, have no parent and no session, so they never
-- maintain these.
CREATE INDEX executions_queue ON executions (created_at, id) WHERE status = 'pending';
CREATE INDEX executions_root ON executions (root_id) WHERE parent_id IS NOT NULL;
CREATE INDEX executions_session ON executions (session_id) WHERE session_id IS NOT NULL;

-- Frames are stored in batches (as a run flushes them): one row per batch.
CREATE TABLE execution_events (
    execution_id  TEXT NOT NULL,
    seq_from      BIGINT NOT NULL,
    seq_to        BIGINT NOT NULL,
    frames        TEXT NOT NULL,
    PRIMARY KEY (execution_id, seq_from)
);

CREATE TABLE traces (
    id                TEXT PRIMARY KEY,
    workspace_id      TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    execution_id      TEXT,
    agent_id          TEXT,
    session_id        TEXT,
    name              TEXT NOT NULL,
    status            TEXT NOT NULL,
    prompt_tokens     BIGINT NOT NULL DEFAULT 0,
    completion_tokens BIGINT NOT NULL DEFAULT 0,
    cost              DOUBLE PRECISION NOT NULL DEFAULT 0,
    duration_ms       BIGINT,
    metadata          TEXT NOT NULL DEFAULT '{}',
    started_at        BIGINT NOT NULL,
    ended_at          BIGINT,
    created_at        BIGINT NOT NULL
);
CREATE INDEX traces_ws_created ON traces (workspace_id, created_at DESC, id DESC);
CREATE INDEX traces_execution ON traces (execution_id);

-- Spans are stored in batches (as a run or an ingest call writes them): one row per batch.
CREATE TABLE spans (
    trace_id      TEXT NOT NULL REFERENCES traces(id) ON DELETE CASCADE,
    first_id      TEXT NOT NULL,
    workspace_id  TEXT NOT NULL,
    count         BIGINT NOT NULL,
    spans         TEXT NOT NULL,
    PRIMARY KEY (trace_id, first_id)
);

CREATE TABLE approvals (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    execution_id  TEXT NOT NULL,
    agent_id      TEXT NOT NULL,
    checkpoint    TEXT NOT NULL,
    description   TEXT NOT NULL DEFAULT '',
    awaiting      TEXT NOT NULL DEFAULT '{}',
    status        TEXT NOT NULL,
    comment       TEXT NOT NULL DEFAULT '',
    reason        TEXT NOT NULL DEFAULT '',
    requested_at  BIGINT NOT NULL,
    decided_at    BIGINT
);
CREATE INDEX approvals_ws_status ON approvals (workspace_id, status, requested_at DESC);
CREATE INDEX approvals_execution ON approvals (execution_id);

CREATE TABLE chat_sessions (
    id                   TEXT PRIMARY KEY,
    workspace_id         TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    agent_id             TEXT NOT NULL,
    title                TEXT NOT NULL DEFAULT '',
    metadata             TEXT NOT NULL DEFAULT '{}',
    message_count        BIGINT NOT NULL DEFAULT 0,
    active_execution_id  TEXT,
    last_message_at      BIGINT,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL
);
CREATE INDEX chat_sessions_ws_created ON chat_sessions (workspace_id, created_at DESC, id DESC);

CREATE TABLE chat_messages (
    id                TEXT PRIMARY KEY,
    workspace_id      TEXT NOT NULL,
    session_id        TEXT NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
    seq               BIGINT NOT NULL,
    role              TEXT NOT NULL,
    content           TEXT NOT NULL,
    execution_id      TEXT,
    user_message_id   TEXT,
    prompt_tokens     BIGINT NOT NULL DEFAULT 0,
    completion_tokens BIGINT NOT NULL DEFAULT 0,
    created_at        BIGINT NOT NULL,
    UNIQUE (session_id, seq)
);

-- +goose Down
DROP TABLE chat_messages;
DROP TABLE chat_sessions;
DROP TABLE approvals;
DROP TABLE spans;
DROP TABLE traces;
DROP TABLE execution_events;
DROP TABLE executions;
