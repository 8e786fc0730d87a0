-- +goose Up
-- Spans move from batches (one JSON array per row) to one row each, and trace ids become
-- per workspace: an ingested trace keeps the id its SDK or OTLP exporter gave it (32 hex
-- digits), and two workspaces may send the same one.

-- Traces: the primary key becomes (workspace_id, id); new columns for the filters and for
-- ingested traces (end user, the resource's service.name). SQLite changes a primary key by
-- rebuilding the table.
CREATE TABLE traces_new (
    id                TEXT NOT NULL,
    workspace_id      TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    execution_id      TEXT,
    agent_id          TEXT,
    session_id        TEXT,
    end_user_id       TEXT,
    service_name      TEXT,
    name              TEXT NOT NULL,
    status            TEXT NOT NULL,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cost              REAL NOT NULL DEFAULT 0,
    duration_ms       INTEGER,
    metadata          TEXT NOT NULL DEFAULT '{}',
    started_at        INTEGER NOT NULL,
    ended_at          INTEGER,
    created_at        INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, id)
);
INSERT INTO traces_new (id, workspace_id, execution_id, agent_id, session_id, end_user_id, name, status, prompt_tokens,
    completion_tokens, cost, duration_ms, metadata, started_at, ended_at, created_at)
SELECT t.id, t.workspace_id, t.execution_id, t.agent_id, t.session_id,
    (SELECT e.end_user_id FROM executions e WHERE e.id = t.execution_id), t.name, t.status, t.prompt_tokens,
    t.completion_tokens, t.cost, t.duration_ms, t.metadata, t.started_at, t.ended_at, t.created_at
FROM traces t;

-- Spans, one row each. input and output are JSON text cut at 32 KiB (a longer value is kept
-- as a JSON string of its first 32 KiB); times are Unix milliseconds.
CREATE TABLE spans_new (
    workspace_id      TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    trace_id          TEXT NOT NULL,
    id                TEXT NOT NULL,
    parent_span_id    TEXT,
    name              TEXT NOT NULL,
    kind              TEXT NOT NULL,
    status            TEXT NOT NULL,
    started_at        INTEGER NOT NULL,
    ended_at          INTEGER,
    model             TEXT,
    provider          TEXT,
    input             TEXT,
    output            TEXT,
    error             TEXT,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cost              REAL NOT NULL DEFAULT 0,
    attributes        TEXT NOT NULL DEFAULT '{}',
    service_name      TEXT,
    PRIMARY KEY (workspace_id, trace_id, id)
);
INSERT INTO spans_new (workspace_id, trace_id, id, parent_span_id, name, kind, status, started_at, ended_at, model, provider,
    input, output, error, prompt_tokens, completion_tokens, cost, attributes)
SELECT b.workspace_id, b.trace_id, j.value ->> '$.id', j.value ->> '$.parent_id', coalesce(j.value ->> '$.name', ''),
    coalesce(j.value ->> '$.kind', 'step'), coalesce(j.value ->> '$.status', 'ok'),
    CAST(strftime('%s', j.value ->> '$.started_at') AS INTEGER) * 1000 + CAST(substr(j.value ->> '$.started_at', 21, 3) AS INTEGER),
    CASE WHEN j.value ->> '$.ended_at' IS NOT NULL THEN
        CAST(strftime('%s', j.value ->> '$.ended_at') AS INTEGER) * 1000 + CAST(substr(j.value ->> '$.ended_at', 21, 3) AS INTEGER) END,
    j.value ->> '$.attributes.model', j.value ->> '$.attributes.provider',
    CASE WHEN j.value -> '$.input' IS NULL OR j.value -> '$.input' = 'null' THEN NULL
         WHEN length(j.value -> '$.input') > 32768 THEN json_quote(substr(j.value -> '$.input', 1, 32768))
         ELSE j.value -> '$.input' END,
    CASE WHEN j.value -> '$.output' IS NULL OR j.value -> '$.output' = 'null' THEN NULL
         WHEN length(j.value -> '$.output') > 32768 THEN json_quote(substr(j.value -> '$.output', 1, 32768))
         ELSE j.value -> '$.output' END,
    j.value ->> '$.error',
    coalesce(j.value ->> '$.token_usage.prompt_tokens', 0), coalesce(j.value ->> '$.token_usage.completion_tokens', 0),
    coalesce(j.value ->> '$.cost', 0), coalesce(j.value -> '$.attributes', '{}')
FROM spans b, json_each(b.spans) j
WHERE j.value ->> '$.id' IS NOT NULL
ON CONFLICT (workspace_id, trace_id, id) DO NOTHING;

DROP TABLE spans;
DROP TABLE traces;
ALTER TABLE traces_new RENAME TO traces;
ALTER TABLE spans_new RENAME TO spans;

CREATE INDEX traces_ws_created ON traces (workspace_id, created_at DESC, id DESC);
CREATE INDEX traces_execution ON traces (execution_id);
CREATE INDEX traces_agent ON traces (workspace_id, agent_id, created_at DESC) WHERE agent_id IS NOT NULL;
CREATE INDEX traces_session ON traces (workspace_id, session_id, created_at DESC) WHERE session_id IS NOT NULL;
CREATE INDEX traces_end_user ON traces (workspace_id, end_user_id, created_at DESC) WHERE end_user_id IS NOT NULL;
-- The summary reads every column it needs from this index, in time order.
CREATE INDEX traces_summary ON traces (workspace_id, started_at, agent_id, status, duration_ms, prompt_tokens, completion_tokens, cost);

-- +goose Down
CREATE TABLE spans_old (
    trace_id      TEXT NOT NULL,
    first_id      TEXT NOT NULL,
    workspace_id  TEXT NOT NULL,
    count         INTEGER NOT NULL,
    spans         TEXT NOT NULL,
    PRIMARY KEY (trace_id, first_id)
);
INSERT INTO spans_old (trace_id, first_id, workspace_id, count, spans)
SELECT trace_id, min(id), workspace_id, count(*), json_group_array(json_object(
    'id', id, 'trace_id', trace_id, 'workspace_id', workspace_id, 'parent_id', parent_span_id, 'name', name, 'kind', kind,
    'status', status, 'input', json(input), 'output', json(output), 'error', error, 'attributes', json(attributes),
    'token_usage', json_object('prompt_tokens', prompt_tokens, 'completion_tokens', completion_tokens,
        'total_tokens', prompt_tokens + completion_tokens),
    'cost', cost,
    'started_at', strftime('%Y-%m-%dT%H:%M:%S', started_at / 1000, 'unixepoch') || printf('.%03dZ', started_at % 1000),
    'ended_at', CASE WHEN ended_at IS NOT NULL THEN
        strftime('%Y-%m-%dT%H:%M:%S', ended_at / 1000, 'unixepoch') || printf('.%03dZ', ended_at % 1000) END,
    'duration_ms', ended_at - started_at))
FROM spans GROUP BY workspace_id, trace_id;
DROP TABLE spans;

CREATE TABLE traces_old (
    id                TEXT PRIMARY KEY,
    workspace_id      TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    execution_id      TEXT,
    agent_id          TEXT,
    session_id        TEXT,
    name              TEXT NOT NULL,
    status            TEXT NOT NULL,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cost              REAL NOT NULL DEFAULT 0,
    duration_ms       INTEGER,
    metadata          TEXT NOT NULL DEFAULT '{}',
    started_at        INTEGER NOT NULL,
    ended_at          INTEGER,
    created_at        INTEGER NOT NULL
);
-- An id held by two workspaces (possible only for ingested traces) keeps its first.
INSERT INTO traces_old SELECT id, workspace_id, execution_id, agent_id, session_id, name, status, prompt_tokens,
    completion_tokens, cost, duration_ms, metadata, started_at, ended_at, created_at FROM traces WHERE true
    ON CONFLICT (id) DO NOTHING;
DROP TABLE traces;
ALTER TABLE traces_old RENAME TO traces;
CREATE INDEX traces_ws_created ON traces (workspace_id, created_at DESC, id DESC);
CREATE INDEX traces_execution ON traces (execution_id);

CREATE TABLE spans (
    trace_id      TEXT NOT NULL REFERENCES traces(id) ON DELETE CASCADE,
    first_id      TEXT NOT NULL,
    workspace_id  TEXT NOT NULL,
    count         INTEGER NOT NULL,
    spans         TEXT NOT NULL,
    PRIMARY KEY (trace_id, first_id)
);
INSERT INTO spans SELECT o.* FROM spans_old o WHERE EXISTS (SELECT 1 FROM traces t WHERE t.id = o.trace_id AND t.workspace_id = o.workspace_id);
DROP TABLE spans_old;
