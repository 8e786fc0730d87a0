-- +goose Up
-- Every filter of the history lists is served by an index in the list's order (newest first,
-- id breaking ties), so a page costs the same at ten million runs as at ten thousand: the
-- planner reads the page's rows off the index instead of sorting or scanning the workspace.
CREATE INDEX executions_agent ON executions (workspace_id, agent_id, created_at DESC, id DESC);
CREATE INDEX executions_status ON executions (workspace_id, status, created_at DESC, id DESC);
CREATE INDEX executions_source ON executions (workspace_id, source, created_at DESC, id DESC);
CREATE INDEX executions_ws_session ON executions (workspace_id, session_id, created_at DESC, id DESC) WHERE session_id IS NOT NULL;
CREATE INDEX traces_status ON traces (workspace_id, status, created_at DESC, id DESC);
CREATE INDEX scores_name_created ON scores (workspace_id, name, created_at DESC, id DESC);
CREATE INDEX scores_source ON scores (workspace_id, source, created_at DESC, id DESC);
CREATE INDEX chat_sessions_agent ON chat_sessions (workspace_id, agent_id, created_at DESC, id DESC);
CREATE INDEX approvals_ws_requested ON approvals (workspace_id, requested_at DESC, id DESC);
-- A chat turn finds its reply, and a trigger its answer, by the execution that wrote it.
CREATE INDEX chat_messages_execution ON chat_messages (execution_id) WHERE execution_id IS NOT NULL;

-- +goose Down
DROP INDEX chat_messages_execution;
DROP INDEX approvals_ws_requested;
DROP INDEX chat_sessions_agent;
DROP INDEX scores_source;
DROP INDEX scores_name_created;
DROP INDEX traces_status;
DROP INDEX executions_ws_session;
DROP INDEX executions_source;
DROP INDEX executions_status;
DROP INDEX executions_agent;
