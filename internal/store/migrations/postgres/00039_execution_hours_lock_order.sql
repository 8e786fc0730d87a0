-- +goose Up
-- Deletes of runs lock their hours' counts in key order (issue 18). The delete branch of
-- execution_hours_count (migration 00037) updated the count rows in the order of its join,
-- which follows the plan and the hours a statement deleted runs of: two deletes over the
-- same hours of a workspace (two batches of retention, retention beside a workspace's purge)
-- could each hold a row the other waits for, and PostgreSQL would end one with a deadlock.
-- The rows are now locked first by a SELECT … ORDER BY … FOR UPDATE, which locks them in the
-- order it returns them, (workspace_id, hour, shard), as inserts already do; the update and
-- the delete after it touch only rows this statement holds. Of two deletes over the same
-- hours, the second waits on the first row they share and holds none after it meanwhile
-- (TestExecutionHoursConcurrentDeletes).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION execution_hours_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO execution_hours AS h (workspace_id, hour, shard, n)
        SELECT workspace_id, created_at / 3600000 * 3600000, hashtext(id) & 7, count(*) FROM new_rows
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        ON CONFLICT (workspace_id, hour, shard) DO UPDATE SET n = h.n + excluded.n;
    ELSE
        PERFORM 1 FROM execution_hours h
        WHERE (h.workspace_id, h.hour, h.shard) IN (SELECT workspace_id, created_at / 3600000 * 3600000, hashtext(id) & 7 FROM old_rows)
        ORDER BY h.workspace_id, h.hour, h.shard
        FOR UPDATE;
        UPDATE execution_hours h SET n = h.n - d.n
        FROM (SELECT workspace_id, created_at / 3600000 * 3600000 AS hour, hashtext(id) & 7 AS shard, count(*) AS n FROM old_rows
            GROUP BY 1, 2, 3) d
        WHERE h.workspace_id = d.workspace_id AND h.hour = d.hour AND h.shard = d.shard;
        DELETE FROM execution_hours h USING (SELECT DISTINCT workspace_id, created_at / 3600000 * 3600000 AS hour, hashtext(id) & 7 AS shard FROM old_rows) d
        WHERE h.workspace_id = d.workspace_id AND h.hour = d.hour AND h.shard = d.shard AND h.n = 0;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- The function of migration 00037.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION execution_hours_count() RETURNS trigger LANGUAGE plpgsql AS $$
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
