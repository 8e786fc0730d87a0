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
-- A trigger keeps them: every trace counts with its current row (a run counts from its start,
-- as the summary always did; its tokens, cost, errors and duration when its row says them), so
-- an insert adds the row and an update subtracts the old row and adds the new one (a re-sent
-- ingested trace is never counted twice). Deleting traces (retention) leaves the rollups: the
-- summary keeps the history of expired hours. A run's commit waits for the locks of its rollup
-- rows; shard (the trace id's hashtext & 7) spreads one agent's hour over 8 rows, summed when
-- read. Bins are not sharded: a run locks the bin of its own duration, so the runs of a busy
-- hour already spread over their distribution's bins.
CREATE TABLE trace_rollups (
    workspace_id      TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    period            BIGINT NOT NULL,
    period_start      BIGINT NOT NULL,
    agent_id          TEXT NOT NULL,
    model             TEXT NOT NULL,
    shard             INTEGER NOT NULL,
    runs              BIGINT NOT NULL,
    errors            BIGINT NOT NULL,
    prompt_tokens     BIGINT NOT NULL,
    completion_tokens BIGINT NOT NULL,
    cost              DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (workspace_id, period, period_start, agent_id, model, shard)
);
CREATE TABLE trace_rollup_bins (
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    period        BIGINT NOT NULL,
    period_start  BIGINT NOT NULL,
    agent_id      TEXT NOT NULL,
    model         TEXT NOT NULL,
    bin           INTEGER NOT NULL,
    count         BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, period, period_start, agent_id, model, bin)
);

-- +goose StatementBegin
CREATE FUNCTION trace_rollup_bin(ms BIGINT) RETURNS INTEGER LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN ms < 1 THEN -1 ELSE floor(ln(ms::double precision) * 99.999166661110607)::integer END
$$;
-- +goose StatementEnd

-- trace_rollup_add adds to the hour and the day of a trace started at started (one statement,
-- two rows).
-- +goose StatementBegin
CREATE FUNCTION trace_rollup_add(ws TEXT, started BIGINT, agent TEXT, shard INTEGER, runs BIGINT, errors BIGINT, pt BIGINT, ct BIGINT,
    cost DOUBLE PRECISION) RETURNS void LANGUAGE sql AS $$
    INSERT INTO trace_rollups AS r (workspace_id, period, period_start, agent_id, model, shard, runs, errors, prompt_tokens,
        completion_tokens, cost)
    SELECT ws, p.ms, started / p.ms * p.ms, agent, '', shard, runs, errors, pt, ct, cost FROM (VALUES (3600000::bigint), (86400000)) p(ms)
    ON CONFLICT (workspace_id, period, period_start, agent_id, model, shard) DO UPDATE SET runs = r.runs + excluded.runs,
        errors = r.errors + excluded.errors, prompt_tokens = r.prompt_tokens + excluded.prompt_tokens,
        completion_tokens = r.completion_tokens + excluded.completion_tokens, cost = r.cost + excluded.cost
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION trace_rollup_bin_add(ws TEXT, started BIGINT, agent TEXT, dur BIGINT, n BIGINT) RETURNS void LANGUAGE sql AS $$
    INSERT INTO trace_rollup_bins AS b (workspace_id, period, period_start, agent_id, model, bin, count)
    SELECT ws, p.ms, started / p.ms * p.ms, agent, '', trace_rollup_bin(dur), n FROM (VALUES (3600000::bigint), (86400000)) p(ms)
    ON CONFLICT (workspace_id, period, period_start, agent_id, model, bin) DO UPDATE SET count = b.count + excluded.count
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION traces_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    new_agent TEXT := coalesce(NEW.agent_id, '');
    new_err BIGINT := CASE WHEN NEW.status = 'failed' THEN 1 ELSE 0 END;
    old_agent TEXT;
    old_err BIGINT;
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM trace_rollup_add(NEW.workspace_id, NEW.started_at, new_agent, hashtext(NEW.id) & 7, 1, new_err, NEW.prompt_tokens,
            NEW.completion_tokens, NEW.cost);
        IF NEW.duration_ms IS NOT NULL THEN
            PERFORM trace_rollup_bin_add(NEW.workspace_id, NEW.started_at, new_agent, NEW.duration_ms, 1);
        END IF;
        RETURN NULL;
    END IF;

    old_agent := coalesce(OLD.agent_id, '');
    old_err := CASE WHEN OLD.status = 'failed' THEN 1 ELSE 0 END;
    IF (OLD.started_at / 3600000, old_agent) = (NEW.started_at / 3600000, new_agent) THEN
        -- The same rollup rows (a run ending): one upsert of the differences.
        IF (old_err, OLD.prompt_tokens, OLD.completion_tokens, OLD.cost) IS DISTINCT FROM (new_err, NEW.prompt_tokens, NEW.completion_tokens, NEW.cost) THEN
            PERFORM trace_rollup_add(NEW.workspace_id, NEW.started_at, new_agent, hashtext(NEW.id) & 7, 0, new_err - old_err,
                NEW.prompt_tokens - OLD.prompt_tokens, NEW.completion_tokens - OLD.completion_tokens, NEW.cost - OLD.cost);
        END IF;
        IF OLD.duration_ms IS NOT DISTINCT FROM NEW.duration_ms THEN
            RETURN NULL;
        END IF;
    ELSE
        PERFORM trace_rollup_add(OLD.workspace_id, OLD.started_at, old_agent, hashtext(OLD.id) & 7, -1, -old_err, -OLD.prompt_tokens,
            -OLD.completion_tokens, -OLD.cost);
        PERFORM trace_rollup_add(NEW.workspace_id, NEW.started_at, new_agent, hashtext(NEW.id) & 7, 1, new_err, NEW.prompt_tokens,
            NEW.completion_tokens, NEW.cost);
    END IF;
    IF OLD.duration_ms IS NOT NULL THEN
        PERFORM trace_rollup_bin_add(OLD.workspace_id, OLD.started_at, old_agent, OLD.duration_ms, -1);
    END IF;
    IF NEW.duration_ms IS NOT NULL THEN
        PERFORM trace_rollup_bin_add(NEW.workspace_id, NEW.started_at, new_agent, NEW.duration_ms, 1);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER traces_rollup_insert AFTER INSERT ON traces FOR EACH ROW EXECUTE FUNCTION traces_rollup();
CREATE TRIGGER traces_rollup_update AFTER UPDATE ON traces FOR EACH ROW
    WHEN ((OLD.agent_id, OLD.started_at, OLD.status, OLD.prompt_tokens, OLD.completion_tokens, OLD.cost, OLD.duration_ms)
        IS DISTINCT FROM (NEW.agent_id, NEW.started_at, NEW.status, NEW.prompt_tokens, NEW.completion_tokens, NEW.cost, NEW.duration_ms))
    EXECUTE FUNCTION traces_rollup();

-- Backfill from the traces already stored (shard 0: any shard sums the same).
INSERT INTO trace_rollups (workspace_id, period, period_start, agent_id, model, shard, runs, errors, prompt_tokens, completion_tokens, cost)
SELECT t.workspace_id, p.ms, t.started_at / p.ms * p.ms, coalesce(t.agent_id, ''), '', 0, count(*),
    sum(CASE WHEN t.status = 'failed' THEN 1 ELSE 0 END), sum(t.prompt_tokens), sum(t.completion_tokens), sum(t.cost)
FROM traces t CROSS JOIN (VALUES (3600000::bigint), (86400000)) p(ms) GROUP BY 1, 2, 3, 4;
INSERT INTO trace_rollup_bins (workspace_id, period, period_start, agent_id, model, bin, count)
SELECT t.workspace_id, p.ms, t.started_at / p.ms * p.ms, coalesce(t.agent_id, ''), '', trace_rollup_bin(t.duration_ms), count(*)
FROM traces t CROSS JOIN (VALUES (3600000::bigint), (86400000)) p(ms) WHERE t.duration_ms IS NOT NULL GROUP BY 1, 2, 3, 4, 6;

-- The summary no longer reads the traces: its covering index goes (one index less to write on
-- every run's end, which can then be a HOT update).
DROP INDEX traces_summary;

-- +goose Down
CREATE INDEX traces_summary ON traces (workspace_id, started_at) INCLUDE (agent_id, status, duration_ms, prompt_tokens, completion_tokens, cost);
DROP TRIGGER traces_rollup_update ON traces;
DROP TRIGGER traces_rollup_insert ON traces;
DROP FUNCTION traces_rollup();
DROP FUNCTION trace_rollup_bin_add(TEXT, BIGINT, TEXT, BIGINT, BIGINT);
DROP FUNCTION trace_rollup_add(TEXT, BIGINT, TEXT, INTEGER, BIGINT, BIGINT, BIGINT, BIGINT, DOUBLE PRECISION);
DROP FUNCTION trace_rollup_bin(BIGINT);
DROP TABLE trace_rollup_bins;
DROP TABLE trace_rollups;
