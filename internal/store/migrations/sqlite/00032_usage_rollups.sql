-- +goose Up
-- Usage rollups: cost and tokens by model and by end user (GET /traces/usage, Studio's usage
-- page), kept as runs end so that the breakdown reads rollups, never the executions. A row
-- holds the sums of the runs of one workspace, agent, period (an hour, 3600000, or a UTC day,
-- 86400000; period_start in Unix ms of the run's created_at), dimension ('model': the model
-- that answered the run's last model call, '' when it made none; 'end_user': its end user,
-- runs without one are not counted) and key. A run counts once, when it reaches a terminal
-- status. SQLite has one writer, so shard is always 0 here (PostgreSQL spreads a hot row over 8).
CREATE TABLE usage_rollups (
    workspace_id      TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    dimension         TEXT NOT NULL,
    period            INTEGER NOT NULL,
    period_start      INTEGER NOT NULL,
    agent_id          TEXT NOT NULL,
    key               TEXT NOT NULL,
    shard             INTEGER NOT NULL,
    runs              INTEGER NOT NULL,
    errors            INTEGER NOT NULL,
    prompt_tokens     INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cost              REAL NOT NULL,
    PRIMARY KEY (workspace_id, dimension, period, period_start, agent_id, key, shard)
) WITHOUT ROWID;

-- +goose StatementBegin
CREATE TRIGGER executions_usage_end AFTER UPDATE OF status ON executions
WHEN OLD.status IN ('pending', 'running', 'awaiting_approval') AND NEW.status NOT IN ('pending', 'running', 'awaiting_approval')
BEGIN
    INSERT INTO usage_rollups (workspace_id, dimension, period, period_start, agent_id, key, shard, runs, errors, prompt_tokens,
        completion_tokens, cost)
    SELECT NEW.workspace_id, d.dim, p.ms, NEW.created_at / p.ms * p.ms, NEW.agent_id, d.key, 0, 1, NEW.status = 'failed',
        NEW.prompt_tokens, NEW.completion_tokens, NEW.cost
    FROM (SELECT 3600000 AS ms UNION ALL SELECT 86400000) p,
        (SELECT 'model' AS dim, coalesce(NEW.model, '') AS key UNION ALL SELECT 'end_user', NEW.end_user_id) d
    WHERE d.key IS NOT NULL
    ON CONFLICT (workspace_id, dimension, period, period_start, agent_id, key, shard) DO UPDATE SET runs = runs + excluded.runs,
        errors = errors + excluded.errors, prompt_tokens = prompt_tokens + excluded.prompt_tokens,
        completion_tokens = completion_tokens + excluded.completion_tokens, cost = cost + excluded.cost;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER executions_usage_insert AFTER INSERT ON executions
WHEN NEW.status NOT IN ('pending', 'running', 'awaiting_approval')
BEGIN
    INSERT INTO usage_rollups (workspace_id, dimension, period, period_start, agent_id, key, shard, runs, errors, prompt_tokens,
        completion_tokens, cost)
    SELECT NEW.workspace_id, d.dim, p.ms, NEW.created_at / p.ms * p.ms, NEW.agent_id, d.key, 0, 1, NEW.status = 'failed',
        NEW.prompt_tokens, NEW.completion_tokens, NEW.cost
    FROM (SELECT 3600000 AS ms UNION ALL SELECT 86400000) p,
        (SELECT 'model' AS dim, coalesce(NEW.model, '') AS key UNION ALL SELECT 'end_user', NEW.end_user_id) d
    WHERE d.key IS NOT NULL
    ON CONFLICT (workspace_id, dimension, period, period_start, agent_id, key, shard) DO UPDATE SET runs = runs + excluded.runs,
        errors = errors + excluded.errors, prompt_tokens = prompt_tokens + excluded.prompt_tokens,
        completion_tokens = completion_tokens + excluded.completion_tokens, cost = cost + excluded.cost;
END;
-- +goose StatementEnd

-- Backfill from the runs already ended, one dimension at a time.
INSERT INTO usage_rollups (workspace_id, dimension, period, period_start, agent_id, key, shard, runs, errors, prompt_tokens,
    completion_tokens, cost)
SELECT e.workspace_id, 'model', p.ms, e.created_at / p.ms * p.ms, e.agent_id, coalesce(e.model, ''), 0, count(*),
    sum(e.status = 'failed'), sum(e.prompt_tokens), sum(e.completion_tokens), sum(e.cost)
FROM executions e CROSS JOIN (SELECT 3600000 AS ms UNION ALL SELECT 86400000) p
WHERE e.status NOT IN ('pending', 'running', 'awaiting_approval')
GROUP BY 1, 2, 3, 4, 5, 6;
INSERT INTO usage_rollups (workspace_id, dimension, period, period_start, agent_id, key, shard, runs, errors, prompt_tokens,
    completion_tokens, cost)
SELECT e.workspace_id, 'end_user', p.ms, e.created_at / p.ms * p.ms, e.agent_id, e.end_user_id, 0, count(*),
    sum(e.status = 'failed'), sum(e.prompt_tokens), sum(e.completion_tokens), sum(e.cost)
FROM executions e CROSS JOIN (SELECT 3600000 AS ms UNION ALL SELECT 86400000) p
WHERE e.status NOT IN ('pending', 'running', 'awaiting_approval') AND e.end_user_id IS NOT NULL
GROUP BY 1, 2, 3, 4, 5, 6;

-- +goose Down
DROP TRIGGER executions_usage_insert;
DROP TRIGGER executions_usage_end;
DROP TABLE usage_rollups;
