-- +goose Up
-- Who a run is for: the signed-in user of a bearer-token call (user_id), and the caller's own
-- id for its end user (end_user_id), to filter and attribute runs and chat sessions by.
ALTER TABLE executions ADD COLUMN user_id TEXT;
ALTER TABLE executions ADD COLUMN end_user_id TEXT;
CREATE INDEX executions_end_user ON executions (workspace_id, end_user_id, created_at DESC) WHERE end_user_id IS NOT NULL;
ALTER TABLE chat_sessions ADD COLUMN user_id TEXT;
ALTER TABLE chat_sessions ADD COLUMN end_user_id TEXT;
CREATE INDEX chat_sessions_end_user ON chat_sessions (workspace_id, end_user_id, created_at DESC) WHERE end_user_id IS NOT NULL;

-- executions:write is not a scope of the platform's spec: cancel, approve and deny need
-- executions:read. Keys that held it get executions:read, the spec's scope for those actions.
UPDATE api_keys SET scopes = replace(scopes, '"executions:write"', '"executions:read"') WHERE scopes LIKE '%"executions:write"%';

-- +goose Down
DROP INDEX chat_sessions_end_user;
ALTER TABLE chat_sessions DROP COLUMN end_user_id;
ALTER TABLE chat_sessions DROP COLUMN user_id;
DROP INDEX executions_end_user;
ALTER TABLE executions DROP COLUMN end_user_id;
ALTER TABLE executions DROP COLUMN user_id;
