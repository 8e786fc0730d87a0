package domain

import "encoding/json"

// MCPTransports are the ways agentplane reaches an MCP server: streamable HTTP (the
// default), the older HTTP+SSE transport, or a local command over stdio.
var MCPTransports = []string{"streamable_http", "sse", "stdio"}

// MCPToolDef is one tool an MCP server offers, as its tools/list reports it.
type MCPToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema,omitempty" doc:"JSON Schema of the tool's arguments (an object schema)."`
}

// MCPTool is a configured MCP server whose tools agents may call; agent configs list its id
// in "tools".
type MCPTool struct {
	ID           string       `json:"id"`
	WorkspaceID  string       `json:"workspace_id"`
	Name         string       `json:"name"`
	Description  string       `json:"description"`
	Transport    string       `json:"transport" enum:"streamable_http,sse,stdio" doc:"streamable_http (the current HTTP transport), sse (the older HTTP+SSE transport) or stdio (a local command; only on a server started with --allow-stdio-mcp)."`
	Command      string       `json:"command" doc:"Executable started for the stdio transport."`
	Args         Strings      `json:"args"`
	Env          Env          `json:"env" doc:"Environment variables of the stdio command (not secrets: those come from the credential)."`
	URL          string       `json:"url" doc:"Endpoint of the streamable_http and sse transports."`
	CredentialID *string      `json:"credential_id" doc:"Credential used to authenticate to the server: sent as Authorization: Bearer, or in the header its metadata.header names."`
	Enabled      bool         `json:"enabled"`
	Tools        []MCPToolDef `json:"tools" doc:"The tools the server offers: what the last successful refresh found, or what was set by hand. Runs of a server with none list its tools themselves."`
	RefreshedAt  *Time        `json:"refreshed_at" doc:"When POST /mcp-tools/{id}/refresh last tried to list the server's tools; null before the first refresh."`
	LastError    *string      `json:"last_error" doc:"Why the last refresh failed; null when it succeeded (or none was made)."`
	CreatedAt    Time         `json:"created_at"`
	UpdatedAt    Time         `json:"updated_at"`
}

// Env holds environment variables by name.
type Env map[string]string

// MCPToolFilter narrows MCPToolList; zero fields match everything.
type MCPToolFilter struct {
	Transport string
	Enabled   *bool
	Query     string // substring of name or description, case-insensitive
}

// MCPToolPatch holds the fields of an MCP server to change; nil fields stay as they are.
// CredentialID pointing to "" unlinks the credential.
type MCPToolPatch struct {
	Name         *string
	Description  *string
	Transport    *string
	Command      *string
	Args         *Strings
	Env          *Env
	URL          *string
	CredentialID *string
	Enabled      *bool
	Tools        *[]MCPToolDef
}

func PtrTo[T any](v T) *T { return &v }
