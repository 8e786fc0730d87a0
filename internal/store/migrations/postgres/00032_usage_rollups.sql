-- +goose Up
-- Usage rollups: cost and tokens by model and by end user (GET /traces/usage, Studio's usage
-- page), kept as runs end so that the breakdown reads rollups, never the executions. A row
-- holds the sums of the runs of one workspace, agent, period (an hour, 3600000, or a UTC day,
-- 86400000; period_start in Unix ms of the run's created_at), dimension ('model': the model
-- that answered the run's last model call, '' when it made none; 'end_user': its end user,
-- runs without one are not counted) and key. A run counts once, when it reaches a terminal
-- status. shard (the run id's hashtext & 7) spreads a busy model's hour over 8 rows, as
-- trace_rollups does; they are summed when read. Retention deleting executions leaves them.
CREATE TABLE usage_rollups (
    workspace_id      TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    dimension         TEXT NOT NULL,
    period            BIGINT NOT NULL,
    period_start      BIGINT NOT NULL,
    agent_id          TEXT NOT NULL,
    key               TEXT NOT NULL,
    shard             INTEGER NOT NULL,
    runs              BIGINT NOT NULL,
    errors            BIGINT NOT NULL,
    prompt_tokens     BIGINT NOT NULL,
    completion_tokens BIGINT NOT NULL,
    cost              DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (workspace_id, dimension, period, period_start, agent_id, key, shard)
);

-- +goose StatementBegin
CREATE FUNCTION executions_usage_rollup() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_rollups AS u (workspace_id, dimension, period, period_start, agent_id, key, shard, runs, errors,
        prompt_tokens, completion_tokens, cost)
    SELECT NEW.workspace_id, d.dim, p.ms, NEW.created_at / p.ms * p.ms, NEW.agent_id, d.key, hashtext(NEW.id) & 7, 1,
        CASE WHEN NEW.status = 'failed' THEN 1 ELSE 0 END, NEW.prompt_tokens, NEW.completion_tokens, NEW.cost
    FROM (VALUES (3600000::bigint), (86400000)) p(ms),
        (VALUES ('model', coalesce(NEW.model, '')), ('end_user', NEW.end_user_id)) d(dim, key)
    WHERE d.key IS NOT NULL
    ON CONFLICT (workspace_id, dimension, period, period_start, agent_id, key, shard) DO UPDATE SET runs = u.runs + excluded.runs,
        errors = u.errors + excluded.errors, prompt_tokens = u.prompt_tokens + excluded.prompt_tokens,
        completion_tokens = u.completion_tokens + excluded.completion_tokens, cost = u.cost + excluded.cost;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER executions_usage_end AFTER UPDATE OF status ON executions FOR EACH ROW
    WHEN (OLD.status IN ('pending', 'running', 'awaiting_approval') AND NEW.status NOT IN ('pending', 'running', 'awaiting_approval'))
    EXECUTE FUNCTION executions_usage_rollup();
CREATE TRIGGER executions_usage_insert AFTER INSERT ON executions FOR EACH ROW
    WHEN (NEW.status NOT IN ('pending', 'running', 'awaiting_approval'))
    EXECUTE FUNCTION executions_usage_rollup();

-- Backfill from the runs already ended (shard 0: any shard sums the same).
INSERT INTO usage_rollups (workspace_id, dimension, period, period_start, agent_id, key, shard, runs, errors, prompt_tokens,
    completion_tokens, cost)
SELECT e.workspace_id, d.dim, p.ms, e.created_at / p.ms * p.ms, e.agent_id, d.key, 0, count(*),
    sum(CASE WHEN e.status = 'failed' THEN 1 ELSE 0 END), sum(e.prompt_tokens), sum(e.completion_tokens), sum(e.cost)
FROM executions e CROSS JOIN (VALUES (3600000::bigint), (86400000)) p(ms)
    CROSS JOIN LATERAL (VALUES ('model', coalesce(e.model, '')), ('end_user', e.end_user_id)) d(dim, key)
WHERE e.status NOT IN ('pending', 'running', 'awaiting_approval') AND d.key IS NOT NULL
GROUP BY 1, 2, 3, 4, 5, 6;

-- +goose Down
DROP TRIGGER executions_usage_insert ON executions;
DROP TRIGGER executions_usage_end ON executions;
DROP FUNCTION executions_usage_rollup();
DROP TABLE usage_rollups;
