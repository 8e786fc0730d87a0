-- +goose Up
-- Trace rollups: GET /traces/summary and Studio's usage page read these, never the traces.
-- One row per workspace, agent ('' for none), model ('' while traces carry none), hour start
-- (Unix ms, of the trace's started_at) and shard holds the sums of the traces of that key;
-- trace_rollup_bins holds their durations as the bins of a DDSketch (github.com/DataDog/
-- sketches-go, logarithmic mapping at 0.5 % relative accuracy: bin = floor(ln(ms) *
-- 99.999166661110607), and -1 for 0 ms, the sketch's zero bucket). The Go side (rollupMapping
-- in tracesummary.go) must use the same accuracy.
--
-- A trigger keeps them: every trace counts with its current row (a run counts from its start,
-- as the summary always did; its tokens, cost, errors and duration when its row says them), so
-- an insert adds the row and an update subtracts the old row and adds the new one (a re-sent
-- ingested trace is never counted twice). Deleting traces (retention) leaves the rollups: the
-- history of expired hours stays in the summary. A run's commit waits for the lock of its
-- rollup row; shard (the trace id's hashtext & 7) spreads one agent's hour over 8 rows, summed
-- when read. Bins are not sharded: a run locks the bin of its own duration, so the runs of a
-- busy hour already spread over their distribution's bins.
CREATE TABLE trace_rollups (
    workspace_id      TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    hour              BIGINT NOT NULL,
    agent_id          TEXT NOT NULL,
    model             TEXT NOT NULL,
    shard             INTEGER NOT NULL,
    runs              BIGINT NOT NULL,
    errors            BIGINT NOT NULL,
    prompt_tokens     BIGINT NOT NULL,
    completion_tokens BIGINT NOT NULL,
    cost              DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (workspace_id, hour, agent_id, model, shard)
);
CREATE TABLE trace_rollup_bins (
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    hour          BIGINT NOT NULL,
    agent_id      TEXT NOT NULL,
    model         TEXT NOT NULL,
    bin           INTEGER NOT NULL,
    count         BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, hour, agent_id, model, bin)
);

-- +goose StatementBegin
CREATE FUNCTION trace_rollup_bin(ms BIGINT) RETURNS INTEGER LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN ms < 1 THEN -1 ELSE floor(ln(ms::double precision) * 99.999166661110607)::integer END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION trace_rollup_add(ws TEXT, hr BIGINT, agent TEXT, shard INTEGER, runs BIGINT, errors BIGINT, pt BIGINT, ct BIGINT,
    cost DOUBLE PRECISION) RETURNS void LANGUAGE sql AS $$
    INSERT INTO trace_rollups AS r (workspace_id, hour, agent_id, model, shard, runs, errors, prompt_tokens, completion_tokens, cost)
    VALUES (ws, hr, agent, '', shard, runs, errors, pt, ct, cost)
    ON CONFLICT (workspace_id, hour, agent_id, model, shard) DO UPDATE SET runs = r.runs + excluded.runs,
        errors = r.errors + excluded.errors, prompt_tokens = r.prompt_tokens + excluded.prompt_tokens,
        completion_tokens = r.completion_tokens + excluded.completion_tokens, cost = r.cost + excluded.cost
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION trace_rollup_bin_add(ws TEXT, hr BIGINT, agent TEXT, ms BIGINT, n BIGINT) RETURNS void LANGUAGE sql AS $$
    INSERT INTO trace_rollup_bins AS b (workspace_id, hour, agent_id, model, bin, count)
    VALUES (ws, hr, agent, '', trace_rollup_bin(ms), n)
    ON CONFLICT (workspace_id, hour, agent_id, model, bin) DO UPDATE SET count = b.count + excluded.count
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION traces_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    new_hr BIGINT := NEW.started_at / 3600000 * 3600000;
    new_agent TEXT := coalesce(NEW.agent_id, '');
    new_err BIGINT := CASE WHEN NEW.status = 'failed' THEN 1 ELSE 0 END;
    old_hr BIGINT;
    old_agent TEXT;
    old_err BIGINT;
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM trace_rollup_add(NEW.workspace_id, new_hr, new_agent, hashtext(NEW.id) & 7, 1, new_err, NEW.prompt_tokens,
            NEW.completion_tokens, NEW.cost);
        IF NEW.duration_ms IS NOT NULL THEN
            PERFORM trace_rollup_bin_add(NEW.workspace_id, new_hr, new_agent, NEW.duration_ms, 1);
        END IF;
        RETURN NULL;
    END IF;

    old_hr := OLD.started_at / 3600000 * 3600000;
    old_agent := coalesce(OLD.agent_id, '');
    old_err := CASE WHEN OLD.status = 'failed' THEN 1 ELSE 0 END;
    IF (old_hr, old_agent) = (new_hr, new_agent) THEN
        -- The same rollup row (a run ending): one upsert of the differences.
        IF (old_err, OLD.prompt_tokens, OLD.completion_tokens, OLD.cost) IS DISTINCT FROM (new_err, NEW.prompt_tokens, NEW.completion_tokens, NEW.cost) THEN
            PERFORM trace_rollup_add(NEW.workspace_id, new_hr, new_agent, hashtext(NEW.id) & 7, 0, new_err - old_err,
                NEW.prompt_tokens - OLD.prompt_tokens, NEW.completion_tokens - OLD.completion_tokens, NEW.cost - OLD.cost);
        END IF;
    ELSE
        PERFORM trace_rollup_add(OLD.workspace_id, old_hr, old_agent, hashtext(OLD.id) & 7, -1, -old_err, -OLD.prompt_tokens,
            -OLD.completion_tokens, -OLD.cost);
        PERFORM trace_rollup_add(NEW.workspace_id, new_hr, new_agent, hashtext(NEW.id) & 7, 1, new_err, NEW.prompt_tokens,
            NEW.completion_tokens, NEW.cost);
    END IF;
    IF OLD.duration_ms IS NOT NULL AND (OLD.duration_ms, old_hr, old_agent) IS DISTINCT FROM (NEW.duration_ms, new_hr, new_agent) THEN
        PERFORM trace_rollup_bin_add(OLD.workspace_id, old_hr, old_agent, OLD.duration_ms, -1);
    END IF;
    IF NEW.duration_ms IS NOT NULL AND (OLD.duration_ms, old_hr, old_agent) IS DISTINCT FROM (NEW.duration_ms, new_hr, new_agent) THEN
        PERFORM trace_rollup_bin_add(NEW.workspace_id, new_hr, new_agent, NEW.duration_ms, 1);
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
INSERT INTO trace_rollups (workspace_id, hour, agent_id, model, shard, runs, errors, prompt_tokens, completion_tokens, cost)
SELECT workspace_id, started_at / 3600000 * 3600000, coalesce(agent_id, ''), '', 0, count(*),
    sum(CASE WHEN status = 'failed' THEN 1 ELSE 0 END), sum(prompt_tokens), sum(completion_tokens), sum(cost)
FROM traces GROUP BY 1, 2, 3;
INSERT INTO trace_rollup_bins (workspace_id, hour, agent_id, model, bin, count)
SELECT workspace_id, started_at / 3600000 * 3600000, coalesce(agent_id, ''), '', trace_rollup_bin(duration_ms), count(*)
FROM traces WHERE duration_ms IS NOT NULL GROUP BY 1, 2, 3, 5;

-- The summary no longer reads the traces: its covering index goes (one index less to write,
-- and on PostgreSQL a run's end can be a HOT update again).
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
