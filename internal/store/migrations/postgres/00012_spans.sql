-- +goose Up
-- Spans move from batches (one JSON array per row) to one row each, and trace ids become
-- per workspace: an ingested trace keeps the id its SDK or OTLP exporter gave it (32 hex
-- digits), and two workspaces may send the same one.

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
    started_at        BIGINT NOT NULL,
    ended_at          BIGINT,
    model             TEXT,
    provider          TEXT,
    input             TEXT,
    output            TEXT,
    error             TEXT,
    prompt_tokens     BIGINT NOT NULL DEFAULT 0,
    completion_tokens BIGINT NOT NULL DEFAULT 0,
    cost              DOUBLE PRECISION NOT NULL DEFAULT 0,
    attributes        TEXT NOT NULL DEFAULT '{}',
    service_name      TEXT,
    CONSTRAINT spans_row_pkey PRIMARY KEY (workspace_id, trace_id, id)
);
INSERT INTO spans_new (workspace_id, trace_id, id, parent_span_id, name, kind, status, started_at, ended_at, model, provider,
    input, output, error, prompt_tokens, completion_tokens, cost, attributes)
SELECT b.workspace_id, b.trace_id, j.e ->> 'id', j.e ->> 'parent_id', coalesce(j.e ->> 'name', ''),
    coalesce(j.e ->> 'kind', 'step'), coalesce(j.e ->> 'status', 'ok'),
    round(extract(epoch FROM (j.e ->> 'started_at')::timestamptz) * 1000)::bigint,
    round(extract(epoch FROM (j.e ->> 'ended_at')::timestamptz) * 1000)::bigint,
    j.e -> 'attributes' ->> 'model', j.e -> 'attributes' ->> 'provider',
    CASE WHEN j.e -> 'input' IS NULL OR json_typeof(j.e -> 'input') = 'null' THEN NULL
         WHEN length((j.e -> 'input')::text) > 32768 THEN to_json(left((j.e -> 'input')::text, 32768))::text
         ELSE (j.e -> 'input')::text END,
    CASE WHEN j.e -> 'output' IS NULL OR json_typeof(j.e -> 'output') = 'null' THEN NULL
         WHEN length((j.e -> 'output')::text) > 32768 THEN to_json(left((j.e -> 'output')::text, 32768))::text
         ELSE (j.e -> 'output')::text END,
    j.e ->> 'error',
    coalesce((j.e -> 'token_usage' ->> 'prompt_tokens')::bigint, 0), coalesce((j.e -> 'token_usage' ->> 'completion_tokens')::bigint, 0),
    coalesce((j.e ->> 'cost')::double precision, 0), coalesce((j.e -> 'attributes')::text, '{}')
FROM spans b CROSS JOIN LATERAL json_array_elements(b.spans::json) AS j(e)
WHERE j.e ->> 'id' IS NOT NULL
ON CONFLICT (workspace_id, trace_id, id) DO NOTHING;

DROP TABLE spans;
ALTER TABLE spans_new RENAME TO spans;

-- Traces: the primary key becomes (workspace_id, id); new columns for the filters and for
-- ingested traces (end user, the resource's service.name).
ALTER TABLE traces DROP CONSTRAINT traces_pkey;
ALTER TABLE traces ADD PRIMARY KEY (workspace_id, id);
ALTER TABLE traces ADD COLUMN end_user_id TEXT;
ALTER TABLE traces ADD COLUMN service_name TEXT;
UPDATE traces t SET end_user_id = e.end_user_id FROM executions e WHERE e.id = t.execution_id AND e.end_user_id IS NOT NULL;

CREATE INDEX traces_agent ON traces (workspace_id, agent_id, created_at DESC) WHERE agent_id IS NOT NULL;
CREATE INDEX traces_session ON traces (workspace_id, session_id, created_at DESC) WHERE session_id IS NOT NULL;
CREATE INDEX traces_end_user ON traces (workspace_id, end_user_id, created_at DESC) WHERE end_user_id IS NOT NULL;
-- The summary reads every column it needs from this index, in time order.
CREATE INDEX traces_summary ON traces (workspace_id, started_at) INCLUDE (agent_id, status, duration_ms, prompt_tokens, completion_tokens, cost);

-- +goose Down
DROP INDEX traces_summary;
DROP INDEX traces_end_user;
DROP INDEX traces_session;
DROP INDEX traces_agent;

CREATE TABLE spans_old (
    trace_id      TEXT NOT NULL,
    first_id      TEXT NOT NULL,
    workspace_id  TEXT NOT NULL,
    count         BIGINT NOT NULL,
    spans         TEXT NOT NULL,
    PRIMARY KEY (trace_id, first_id)
);
INSERT INTO spans_old (trace_id, first_id, workspace_id, count, spans)
SELECT trace_id, min(id), workspace_id, count(*), json_agg(json_build_object(
    'id', id, 'trace_id', trace_id, 'workspace_id', workspace_id, 'parent_id', parent_span_id, 'name', name, 'kind', kind,
    'status', status, 'input', input::json, 'output', output::json, 'error', error, 'attributes', attributes::json,
    'token_usage', json_build_object('prompt_tokens', prompt_tokens, 'completion_tokens', completion_tokens,
        'total_tokens', prompt_tokens + completion_tokens),
    'cost', cost,
    'started_at', to_char(to_timestamp(started_at / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'ended_at', to_char(to_timestamp(ended_at / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'duration_ms', ended_at - started_at) ORDER BY started_at)::text
FROM spans GROUP BY workspace_id, trace_id;
DROP TABLE spans;

-- An id held by two workspaces (possible only for ingested traces) keeps its first.
DELETE FROM traces t USING traces u WHERE t.id = u.id AND t.created_at > u.created_at;
ALTER TABLE traces DROP CONSTRAINT traces_pkey;
ALTER TABLE traces ADD PRIMARY KEY (id);
ALTER TABLE traces DROP COLUMN service_name;
ALTER TABLE traces DROP COLUMN end_user_id;

CREATE TABLE spans (
    trace_id      TEXT NOT NULL REFERENCES traces(id) ON DELETE CASCADE,
    first_id      TEXT NOT NULL,
    workspace_id  TEXT NOT NULL,
    count         BIGINT NOT NULL,
    spans         TEXT NOT NULL,
    PRIMARY KEY (trace_id, first_id)
);
INSERT INTO spans SELECT o.* FROM spans_old o WHERE EXISTS (SELECT 1 FROM traces t WHERE t.id = o.trace_id AND t.workspace_id = o.workspace_id);
DROP TABLE spans_old;
