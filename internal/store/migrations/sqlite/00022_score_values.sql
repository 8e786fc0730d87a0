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
    has_value     INTEGER NOT NULL,
    value_key     REAL NOT NULL,
    string_value  TEXT NOT NULL,
    n             INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, name, data_type, has_value, value_key, string_value)
);

-- +goose StatementBegin
CREATE TRIGGER scores_count_insert AFTER INSERT ON scores BEGIN
        INSERT INTO score_values (workspace_id, name, data_type, has_value, value_key, string_value, n)
            VALUES (NEW.workspace_id, NEW.name, NEW.data_type, NEW.value IS NOT NULL, COALESCE(NEW.value, 0), COALESCE(NEW.string_value, ''), 1)
            ON CONFLICT (workspace_id, name, data_type, has_value, value_key, string_value) DO UPDATE SET n = score_values.n + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER scores_count_delete AFTER DELETE ON scores BEGIN
        UPDATE score_values SET n = n - 1 WHERE workspace_id = OLD.workspace_id AND name = OLD.name AND data_type = OLD.data_type
            AND has_value = (OLD.value IS NOT NULL) AND value_key = COALESCE(OLD.value, 0) AND string_value = COALESCE(OLD.string_value, '');
        DELETE FROM score_values WHERE workspace_id = OLD.workspace_id AND name = OLD.name AND data_type = OLD.data_type
            AND has_value = (OLD.value IS NOT NULL) AND value_key = COALESCE(OLD.value, 0) AND string_value = COALESCE(OLD.string_value, '') AND n <= 0;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER scores_count_update AFTER UPDATE OF workspace_id, name, data_type, value, string_value ON scores BEGIN
        UPDATE score_values SET n = n - 1 WHERE workspace_id = OLD.workspace_id AND name = OLD.name AND data_type = OLD.data_type
            AND has_value = (OLD.value IS NOT NULL) AND value_key = COALESCE(OLD.value, 0) AND string_value = COALESCE(OLD.string_value, '');
        DELETE FROM score_values WHERE workspace_id = OLD.workspace_id AND name = OLD.name AND data_type = OLD.data_type
            AND has_value = (OLD.value IS NOT NULL) AND value_key = COALESCE(OLD.value, 0) AND string_value = COALESCE(OLD.string_value, '') AND n <= 0;
        INSERT INTO score_values (workspace_id, name, data_type, has_value, value_key, string_value, n)
            VALUES (NEW.workspace_id, NEW.name, NEW.data_type, NEW.value IS NOT NULL, COALESCE(NEW.value, 0), COALESCE(NEW.string_value, ''), 1)
            ON CONFLICT (workspace_id, name, data_type, has_value, value_key, string_value) DO UPDATE SET n = score_values.n + 1;
END;
-- +goose StatementEnd
INSERT INTO score_values (workspace_id, name, data_type, has_value, value_key, string_value, n)
    SELECT workspace_id, name, data_type, value IS NOT NULL, COALESCE(value, 0), COALESCE(string_value, ''), count(*)
    FROM scores GROUP BY workspace_id, name, data_type, value IS NOT NULL, COALESCE(value, 0), COALESCE(string_value, '');

-- +goose Down
DROP TRIGGER scores_count_update;
DROP TRIGGER scores_count_delete;
DROP TRIGGER scores_count_insert;
DROP TABLE score_values;
