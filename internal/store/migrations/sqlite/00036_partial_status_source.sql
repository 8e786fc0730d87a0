-- +goose Up
-- Bytes per run (issue 18), continued. Most runs complete, and most come from the API: the
-- indexes of the status and source filters hold only the other rows, the ones such a filter
-- looks for among many. A list filtered on the common value (status completed, source api)
-- reads the workspace's index of all its runs, newest first, where most rows match; a list
-- filtered on another value says `status <> 'completed'` (or `source <> 'api'`) beside it, so
-- the planner may use the partial index in a generic plan too. Ascending, as migration 00033 made every list index (read backward for newest first) (store.ExecutionList,
-- store.TraceList; TestHistoryReadsUseIndexes checks every value).
DROP INDEX executions_status;
CREATE INDEX executions_status ON executions (workspace_id, status, created_at, id) WHERE status <> 'completed';
DROP INDEX executions_source;
CREATE INDEX executions_source ON executions (workspace_id, source, created_at, id) WHERE source <> 'api';
DROP INDEX traces_status;
CREATE INDEX traces_status ON traces (workspace_id, status, created_at, id) WHERE status <> 'completed';

-- +goose Down
DROP INDEX traces_status;
CREATE INDEX traces_status ON traces (workspace_id, status, created_at, id);
DROP INDEX executions_source;
CREATE INDEX executions_source ON executions (workspace_id, source, created_at, id);
DROP INDEX executions_status;
CREATE INDEX executions_status ON executions (workspace_id, status, created_at, id);
