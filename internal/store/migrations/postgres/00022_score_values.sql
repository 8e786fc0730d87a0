-- +goose Up
-- score_values counts the scores of each workspace, name, data type and value, kept by
-- triggers as scores are written, changed and deleted (retention and workspace deletion
-- included), so that the scores summary without filters other than name and data type reads
-- a row per distinct value instead of every score. A value is keyed as has_value + value_key
-- (0 when it has none) and string_value ('' when it has none): key columns are NOT NULL, so
-- the upsert finds the one row of a value on both dialects.
CREATE TABLE score_values (
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    data_type     TEXT NOT NULL,
    has_value     BOOLEAN NOT NULL,
    value_key     DOUBLE PRECISION NOT NULL,
    string_value  TEXT NOT NULL,
    n             BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, name, data_type, has_value, value_key, string_value)
);

-- The triggers run once per statement over its transition tables: a statement writing many
-- scores (a bulk load, a retention batch) updates each count once, where a trigger per row
-- would update the same row once per score, each time behind the versions of the last.
-- +goose StatementBegin
CREATE FUNCTION score_values_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO score_values (workspace_id, name, data_type, has_value, value_key, string_value, n)
            SELECT workspace_id, name, data_type, value IS NOT NULL, COALESCE(value, 0), COALESCE(string_value, ''), sum(d) FROM (SELECT *, 1 AS d FROM new_scores) x
            GROUP BY workspace_id, name, data_type, value IS NOT NULL, COALESCE(value, 0), COALESCE(string_value, '') HAVING sum(d) <> 0
            ON CONFLICT (workspace_id, name, data_type, has_value, value_key, string_value) DO UPDATE SET n = score_values.n + EXCLUDED.n;
    ELSIF TG_OP = 'DELETE' THEN
        -- Only existing counts go down (a workspace deleted at once may have lost them first).
        UPDATE score_values v SET n = v.n - d.n FROM (
            SELECT workspace_id, name, data_type, value IS NOT NULL AS has_value, COALESCE(value, 0) AS value_key,
                COALESCE(string_value, '') AS string_value, count(*) AS n
            FROM old_scores GROUP BY 1, 2, 3, 4, 5, 6) d
            WHERE v.workspace_id = d.workspace_id AND v.name = d.name AND v.data_type = d.data_type AND v.has_value = d.has_value
                AND v.value_key = d.value_key AND v.string_value = d.string_value;
    ELSE
        INSERT INTO score_values (workspace_id, name, data_type, has_value, value_key, string_value, n)
            SELECT workspace_id, name, data_type, value IS NOT NULL, COALESCE(value, 0), COALESCE(string_value, ''), sum(d) FROM (SELECT *, 1 AS d FROM new_scores UNION ALL SELECT *, -1 AS d FROM old_scores) x
            GROUP BY workspace_id, name, data_type, value IS NOT NULL, COALESCE(value, 0), COALESCE(string_value, '') HAVING sum(d) <> 0
            ON CONFLICT (workspace_id, name, data_type, has_value, value_key, string_value) DO UPDATE SET n = score_values.n + EXCLUDED.n;
    END IF;
    DELETE FROM score_values WHERE n <= 0;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE INDEX score_values_empty ON score_values (workspace_id) WHERE n <= 0;
CREATE TRIGGER scores_count_insert AFTER INSERT ON scores REFERENCING NEW TABLE AS new_scores
    FOR EACH STATEMENT EXECUTE FUNCTION score_values_count();
CREATE TRIGGER scores_count_delete AFTER DELETE ON scores REFERENCING OLD TABLE AS old_scores
    FOR EACH STATEMENT EXECUTE FUNCTION score_values_count();
CREATE TRIGGER scores_count_update AFTER UPDATE ON scores REFERENCING OLD TABLE AS old_scores NEW TABLE AS new_scores
    FOR EACH STATEMENT EXECUTE FUNCTION score_values_count();
INSERT INTO score_values (workspace_id, name, data_type, has_value, value_key, string_value, n)
    SELECT workspace_id, name, data_type, value IS NOT NULL, COALESCE(value, 0), COALESCE(string_value, ''), count(*)
    FROM scores GROUP BY workspace_id, name, data_type, value IS NOT NULL, COALESCE(value, 0), COALESCE(string_value, '');

-- +goose Down
DROP TRIGGER scores_count_update ON scores;
DROP TRIGGER scores_count_delete ON scores;
DROP TRIGGER scores_count_insert ON scores;
DROP FUNCTION score_values_count();
DROP TABLE score_values;
