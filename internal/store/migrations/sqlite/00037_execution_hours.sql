-- +goose Up
-- Runs per hour (issue 18): page N of the unfiltered list of executions skips whole hours by
-- their counts, then reads at most one hour's runs past them, never the N - 1 pages before it
-- (store.ExecutionList). A row counts the executions of one workspace created in the hour that
-- starts at hour (Unix ms, created_at / 3600000 * 3600000): the hour's runs are exactly those
-- with hour <= created_at < hour + 3600000. The triggers below keep the counts exact on every
-- insert and delete of executions (runs, fixtures, retention, a workspace's purge, bulk loads);
-- no statement changes an execution's workspace_id or created_at. SQLite has one writer, so
-- shard is always 0 here (PostgreSQL spreads a busy hour over 8 rows); a row whose count falls
-- to 0 is deleted, so retention leaves none.
CREATE TABLE execution_hours (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    hour         INTEGER NOT NULL,
    shard        INTEGER NOT NULL,
    n            INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, hour, shard)
) WITHOUT ROWID;

-- +goose StatementBegin
CREATE TRIGGER executions_hours_insert AFTER INSERT ON executions
BEGIN
    INSERT INTO execution_hours (workspace_id, hour, shard, n) VALUES (NEW.workspace_id, NEW.created_at / 3600000 * 3600000, 0, 1)
    ON CONFLICT (workspace_id, hour, shard) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd

-- A delete only updates: the rows of a workspace being deleted may be gone already (the
-- cascade of its row).
-- +goose StatementBegin
CREATE TRIGGER executions_hours_delete AFTER DELETE ON executions
BEGIN
    UPDATE execution_hours SET n = n - 1 WHERE workspace_id = OLD.workspace_id AND hour = OLD.created_at / 3600000 * 3600000 AND shard = 0;
    DELETE FROM execution_hours WHERE workspace_id = OLD.workspace_id AND hour = OLD.created_at / 3600000 * 3600000 AND shard = 0 AND n = 0;
END;
-- +goose StatementEnd

INSERT INTO execution_hours (workspace_id, hour, shard, n)
SELECT workspace_id, created_at / 3600000 * 3600000, 0, count(*) FROM executions GROUP BY 1, 2;

-- +goose Down
DROP TRIGGER executions_hours_delete;
DROP TRIGGER executions_hours_insert;
DROP TABLE execution_hours;
