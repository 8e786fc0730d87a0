-- +goose Up
-- Trace rollups: GET /traces/summary and Studio's usage page read these, never the traces.
-- A row of trace_rollups holds the sums of the traces of one workspace, agent ('' for none),
-- model ('' while traces carry none) and period: an hour (period 3600000, period_start the
-- hour's start in Unix ms, of the trace's started_at) or a UTC day (period 86400000), so that
-- a summary by day reads a row per agent and day, not 24. trace_rollup_bins holds their
-- durations as the bins of a DDSketch (github.com/DataDog/sketches-go, logarithmic mapping at
-- 0.5 % relative accuracy: bin = floor(ln(ms) * 99.999166661110607), and -1 for 0 ms, the
-- sketch's zero bucket). The Go side (rollupMapping in tracesummary.go) uses the same accuracy.
--
-- Triggers keep them: every trace counts with its current row (a run counts from its start,
-- as the summary always did; its tokens, cost, errors and duration when its row says them), so
-- an insert adds the row and an update subtracts the old row and adds the new one (a re-sent
-- ingested trace is never counted twice). Deleting traces (retention) leaves the rollups.
-- SQLite has one writer, so shard is always 0 here (PostgreSQL spreads a hot row over 8).
CREATE TABLE trace_rollups (
    workspace_id      TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    period            INTEGER NOT NULL,
    period_start      INTEGER NOT NULL,
    agent_id          TEXT NOT NULL,
    model             TEXT NOT NULL,
    shard             INTEGER NOT NULL,
    runs              INTEGER NOT NULL,
    errors            INTEGER NOT NULL,
    prompt_tokens     INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cost              REAL NOT NULL,
    PRIMARY KEY (workspace_id, period, period_start, agent_id, model, shard)
) WITHOUT ROWID;
CREATE TABLE trace_rollup_bins (
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    period        INTEGER NOT NULL,
    period_start  INTEGER NOT NULL,
    agent_id      TEXT NOT NULL,
    model         TEXT NOT NULL,
    bin           INTEGER NOT NULL,
    count         INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, period, period_start, agent_id, model, bin)
) WITHOUT ROWID;

-- Each statement writes the trace's hour and its day.
-- +goose StatementBegin
CREATE TRIGGER traces_rollup_insert AFTER INSERT ON traces BEGIN
    INSERT INTO trace_rollups (workspace_id, period, period_start, agent_id, model, shard, runs, errors, prompt_tokens, completion_tokens, cost)
    SELECT NEW.workspace_id, p.ms, NEW.started_at / p.ms * p.ms, coalesce(NEW.agent_id, ''), '', 0, 1, NEW.status = 'failed',
        NEW.prompt_tokens, NEW.completion_tokens, NEW.cost FROM (SELECT 3600000 AS ms UNION ALL SELECT 86400000) p WHERE true
    ON CONFLICT (workspace_id, period, period_start, agent_id, model, shard) DO UPDATE SET runs = runs + excluded.runs,
        errors = errors + excluded.errors, prompt_tokens = prompt_tokens + excluded.prompt_tokens,
        completion_tokens = completion_tokens + excluded.completion_tokens, cost = cost + excluded.cost;
    INSERT INTO trace_rollup_bins (workspace_id, period, period_start, agent_id, model, bin, count)
    SELECT NEW.workspace_id, p.ms, NEW.started_at / p.ms * p.ms, coalesce(NEW.agent_id, ''), '',
        CASE WHEN NEW.duration_ms < 1 THEN -1 ELSE CAST(floor(ln(NEW.duration_ms) * 99.999166661110607) AS INTEGER) END, 1
    FROM (SELECT 3600000 AS ms UNION ALL SELECT 86400000) p WHERE NEW.duration_ms IS NOT NULL
    ON CONFLICT (workspace_id, period, period_start, agent_id, model, bin) DO UPDATE SET count = count + excluded.count;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER traces_rollup_update AFTER UPDATE ON traces
WHEN OLD.agent_id IS NOT NEW.agent_id OR OLD.started_at IS NOT NEW.started_at OR OLD.status IS NOT NEW.status
    OR OLD.prompt_tokens IS NOT NEW.prompt_tokens OR OLD.completion_tokens IS NOT NEW.completion_tokens OR OLD.cost IS NOT NEW.cost
    OR OLD.duration_ms IS NOT NEW.duration_ms
BEGIN
    INSERT INTO trace_rollups (workspace_id, period, period_start, agent_id, model, shard, runs, errors, prompt_tokens, completion_tokens, cost)
    SELECT OLD.workspace_id, p.ms, OLD.started_at / p.ms * p.ms, coalesce(OLD.agent_id, ''), '', 0, -1, -(OLD.status = 'failed'),
        -OLD.prompt_tokens, -OLD.completion_tokens, -OLD.cost FROM (SELECT 3600000 AS ms UNION ALL SELECT 86400000) p WHERE true
    ON CONFLICT (workspace_id, period, period_start, agent_id, model, shard) DO UPDATE SET runs = runs + excluded.runs,
        errors = errors + excluded.errors, prompt_tokens = prompt_tokens + excluded.prompt_tokens,
        completion_tokens = completion_tokens + excluded.completion_tokens, cost = cost + excluded.cost;
    INSERT INTO trace_rollups (workspace_id, period, period_start, agent_id, model, shard, runs, errors, prompt_tokens, completion_tokens, cost)
    SELECT NEW.workspace_id, p.ms, NEW.started_at / p.ms * p.ms, coalesce(NEW.agent_id, ''), '', 0, 1, NEW.status = 'failed',
        NEW.prompt_tokens, NEW.completion_tokens, NEW.cost FROM (SELECT 3600000 AS ms UNION ALL SELECT 86400000) p WHERE true
    ON CONFLICT (workspace_id, period, period_start, agent_id, model, shard) DO UPDATE SET runs = runs + excluded.runs,
        errors = errors + excluded.errors, prompt_tokens = prompt_tokens + excluded.prompt_tokens,
        completion_tokens = completion_tokens + excluded.completion_tokens, cost = cost + excluded.cost;
    INSERT INTO trace_rollup_bins (workspace_id, period, period_start, agent_id, model, bin, count)
    SELECT OLD.workspace_id, p.ms, OLD.started_at / p.ms * p.ms, coalesce(OLD.agent_id, ''), '',
        CASE WHEN OLD.duration_ms < 1 THEN -1 ELSE CAST(floor(ln(OLD.duration_ms) * 99.999166661110607) AS INTEGER) END, -1
    FROM (SELECT 3600000 AS ms UNION ALL SELECT 86400000) p WHERE OLD.duration_ms IS NOT NULL
    ON CONFLICT (workspace_id, period, period_start, agent_id, model, bin) DO UPDATE SET count = count + excluded.count;
    INSERT INTO trace_rollup_bins (workspace_id, period, period_start, agent_id, model, bin, count)
    SELECT NEW.workspace_id, p.ms, NEW.started_at / p.ms * p.ms, coalesce(NEW.agent_id, ''), '',
        CASE WHEN NEW.duration_ms < 1 THEN -1 ELSE CAST(floor(ln(NEW.duration_ms) * 99.999166661110607) AS INTEGER) END, 1
    FROM (SELECT 3600000 AS ms UNION ALL SELECT 86400000) p WHERE NEW.duration_ms IS NOT NULL
    ON CONFLICT (workspace_id, period, period_start, agent_id, model, bin) DO UPDATE SET count = count + excluded.count;
END;
-- +goose StatementEnd

-- Backfill from the traces already stored.
INSERT INTO trace_rollups (workspace_id, period, period_start, agent_id, model, shard, runs, errors, prompt_tokens, completion_tokens, cost)
SELECT t.workspace_id, p.ms, t.started_at / p.ms * p.ms, coalesce(t.agent_id, ''), '', 0, count(*),
    sum(t.status = 'failed'), sum(t.prompt_tokens), sum(t.completion_tokens), sum(t.cost)
FROM traces t CROSS JOIN (SELECT 3600000 AS ms UNION ALL SELECT 86400000) p GROUP BY 1, 2, 3, 4;
INSERT INTO trace_rollup_bins (workspace_id, period, period_start, agent_id, model, bin, count)
SELECT t.workspace_id, p.ms, t.started_at / p.ms * p.ms, coalesce(t.agent_id, ''), '',
        CASE WHEN t.duration_ms < 1 THEN -1 ELSE CAST(floor(ln(t.duration_ms) * 99.999166661110607) AS INTEGER) END, count(*)
FROM traces t CROSS JOIN (SELECT 3600000 AS ms UNION ALL SELECT 86400000) p WHERE t.duration_ms IS NOT NULL GROUP BY 1, 2, 3, 4, 6;

-- The summary no longer reads the traces: its covering index goes (one index less to write).
DROP INDEX traces_summary;

-- +goose Down
CREATE INDEX traces_summary ON traces (workspace_id, started_at, agent_id, status, duration_ms, prompt_tokens, completion_tokens, cost);
DROP TRIGGER traces_rollup_update;
DROP TRIGGER traces_rollup_insert;
DROP TABLE trace_rollup_bins;
DROP TABLE trace_rollups;
