-- +goose Up
-- MCP servers are reached over streamable HTTP (what "http" meant), the older HTTP+SSE
-- transport, or stdio, whose command gets the variables of env (a JSON object).
-- POST /mcp-tools/{id}/refresh records when it last listed the server's tools (Unix ms) and
-- what went wrong, if anything.
UPDATE mcp_tools SET transport = 'streamable_http' WHERE transport = 'http';
ALTER TABLE mcp_tools ADD COLUMN refreshed_at INTEGER;
ALTER TABLE mcp_tools ADD COLUMN last_error TEXT;
ALTER TABLE mcp_tools ADD COLUMN env TEXT NOT NULL DEFAULT '{}';

-- +goose Down
ALTER TABLE mcp_tools DROP COLUMN env;
ALTER TABLE mcp_tools DROP COLUMN last_error;
ALTER TABLE mcp_tools DROP COLUMN refreshed_at;
UPDATE mcp_tools SET transport = 'http' WHERE transport IN ('streamable_http', 'sse');
