-- +goose Up
-- Runs per hour (issue 18): page N of the unfiltered list of executions skips whole hours by
-- their counts, then reads at most one hour's runs past them, never the N - 1 pages before it
-- (store.ExecutionList). A row counts the executions of one workspace created in the hour that
-- starts at hour (Unix ms, created_at / 3600000 * 3600000): the hour's runs are exactly those
-- with hour <= created_at < hour + 3600000. The triggers below keep the counts exact on every
-- insert and delete of executions (runs, fixtures, retention, a workspace's purge, bulk loads);
-- no statement changes an execution's workspace_id or created_at. shard (the run id's
-- hashtext & 7) spreads the current hour of a busy workspace over 8 rows, as usage_rollups
-- does, summed when read; a row whose count falls to 0 is deleted, so retention leaves none.
CREATE TABLE execution_hours (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    hour         BIGINT NOT NULL,
    shard        INTEGER NOT NULL,
    n            BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, hour, shard)
);

-- Once per statement, from its transition table: a batch of a bulk load or of retention
-- writes each of its hours once. An insert locks its rows in key order, so that two bulk
-- loads wait for each other rather than deadlock (a run's insert locks one row). A delete only
-- updates: the rows of a workspace being deleted may be gone already (the cascade of its row).
-- +goose StatementBegin
CREATE FUNCTION execution_hours_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO execution_hours AS h (workspace_id, hour, shard, n)
        SELECT workspace_id, created_at / 3600000 * 3600000, hashtext(id) & 7, count(*) FROM new_rows
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        ON CONFLICT (workspace_id, hour, shard) DO UPDATE SET n = h.n + excluded.n;
    ELSE
        UPDATE execution_hours h SET n = h.n - d.n
        FROM (SELECT workspace_id, created_at / 3600000 * 3600000 AS hour, hashtext(id) & 7 AS shard, count(*) AS n FROM old_rows
            GROUP BY 1, 2, 3) d
        WHERE h.workspace_id = d.workspace_id AND h.hour = d.hour AND h.shard = d.shard;
        DELETE FROM execution_hours h USING (SELECT DISTINCT workspace_id, created_at / 3600000 * 3600000 AS hour FROM old_rows) d
        WHERE h.workspace_id = d.workspace_id AND h.hour = d.hour AND h.n = 0;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER executions_hours_insert AFTER INSERT ON executions REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION execution_hours_count();
CREATE TRIGGER executions_hours_delete AFTER DELETE ON executions REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION execution_hours_count();

-- Backfill, after the triggers: creating them locked out writers of executions until this
-- migration commits, and this statement sees every run committed before.
INSERT INTO execution_hours (workspace_id, hour, shard, n)
SELECT workspace_id, created_at / 3600000 * 3600000, hashtext(id) & 7, count(*) FROM executions GROUP BY 1, 2, 3;

-- +goose Down
DROP TRIGGER executions_hours_delete ON executions;
DROP TRIGGER executions_hours_insert ON executions;
DROP FUNCTION execution_hours_count();
DROP TABLE execution_hours;
