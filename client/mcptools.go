package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// MCPToolDef is one tool an MCP server offers.
type MCPToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// MCPTool is a configured MCP server whose tools agents may call.
type MCPTool struct {
	ID           string            `json:"id"`
	WorkspaceID  string            `json:"workspace_id"`
	Name         string            `json:"name"`
	Description  string            `json:"description"`
	Transport    string            `json:"transport"`
	Command      string            `json:"command"`
	Args         []string          `json:"args"`
	Env          map[string]string `json:"env"`
	URL          string            `json:"url"`
	CredentialID *string           `json:"credential_id"`
	Enabled      bool              `json:"enabled"`
	Tools        []MCPToolDef      `json:"tools"`
	// RefreshedAt is when a refresh last listed the server's tools (or tried to); LastError
	// is why it failed, nil when it succeeded.
	RefreshedAt *time.Time `json:"refreshed_at"`
	LastError   *string    `json:"last_error"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
}

// ToolRef is an entry of an agent config's tools: an MCP server (MCPToolID) and, when Names
// is set, the only tools of it the agent may call. It is sent as the id alone when Names is
// nil.
type ToolRef struct {
	MCPToolID string   `json:"mcp_tool_id"`
	Names     []string `json:"names,omitempty"`
}

// MCPTools returns references to all the tools of the servers ids.
func MCPTools(ids ...string) []ToolRef {
	refs := make([]ToolRef, len(ids))
	for i, id := range ids {
		refs[i] = ToolRef{MCPToolID: id}
	}
	return refs
}

// MarshalJSON sends the id alone when the reference takes all the server's tools.
func (t ToolRef) MarshalJSON() ([]byte, error) {
	if t.Names == nil {
		return json.Marshal(t.MCPToolID)
	}
	type plain ToolRef
	return json.Marshal(plain(t))
}

// UnmarshalJSON reads an id or an object.
func (t *ToolRef) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		*t = ToolRef{}
		return json.Unmarshal(b, &t.MCPToolID)
	}
	type plain ToolRef
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*t = ToolRef(p)
	return nil
}

// MCPToolCreate is the body of MCPToolCreate; Enabled defaults to true.
type MCPToolCreate struct {
	Name         string            `json:"name"`
	Description  string            `json:"description,omitempty"`
	Transport    string            `json:"transport"`
	Command      string            `json:"command,omitempty"`
	Args         []string          `json:"args,omitempty"`
	Env          map[string]string `json:"env,omitempty"`
	URL          string            `json:"url,omitempty"`
	CredentialID *string           `json:"credential_id,omitempty"`
	Enabled      *bool             `json:"enabled,omitempty"`
	Tools        []MCPToolDef      `json:"tools,omitempty"`
}

// MCPToolUpdate holds the fields to change; nil fields stay as they are. An empty
// CredentialID unlinks the credential.
type MCPToolUpdate struct {
	Name         *string            `json:"name,omitempty"`
	Description  *string            `json:"description,omitempty"`
	Transport    *string            `json:"transport,omitempty"`
	Command      *string            `json:"command,omitempty"`
	Args         *[]string          `json:"args,omitempty"`
	Env          *map[string]string `json:"env,omitempty"`
	URL          *string            `json:"url,omitempty"`
	CredentialID *string            `json:"credential_id,omitempty"`
	Enabled      *bool              `json:"enabled,omitempty"`
	Tools        *[]MCPToolDef      `json:"tools,omitempty"`
}

// MCPToolListOptions filters MCPToolList.
type MCPToolListOptions struct {
	ListOptions
	Transport string
	Enabled   *bool
	Query     string
}

// MCPEnvVar is an environment variable a template's server reads.
type MCPEnvVar struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// MCPToolTemplate is a ready configuration of a commonly used MCP server.
type MCPToolTemplate struct {
	ID             string       `json:"id"`
	Name           string       `json:"name"`
	Description    string       `json:"description"`
	Transport      string       `json:"transport"`
	Command        string       `json:"command,omitempty"`
	Args           []string     `json:"args"`
	URL            string       `json:"url,omitempty"`
	RequiredEnv    []MCPEnvVar  `json:"required_env"`
	CredentialHint string       `json:"credential_hint,omitempty"`
	Homepage       string       `json:"homepage"`
	Tools          []MCPToolDef `json:"tools"`
}

// MCPToolTemplateListOptions filters MCPToolTemplates.
type MCPToolTemplateListOptions struct {
	ListOptions
	Query string
}

// MCPToolList lists MCP servers, newest first.
func (c *Client) MCPToolList(ctx context.Context, o MCPToolListOptions) (*List[MCPTool], error) {
	q := o.values()
	setIf(q, "transport", o.Transport)
	setBool(q, "enabled", o.Enabled)
	setIf(q, "q", o.Query)
	return list[MCPTool](ctx, c, "/api/v1/mcp-tools", q)
}

// MCPToolCreate registers an MCP server.
func (c *Client) MCPToolCreate(ctx context.Context, in MCPToolCreate, opts ...RequestOption) (*MCPTool, error) {
	return send[MCPTool](ctx, c, http.MethodPost, "/api/v1/mcp-tools", in, opts...)
}

// MCPToolGet gets an MCP server.
func (c *Client) MCPToolGet(ctx context.Context, id string) (*MCPTool, error) {
	return get[MCPTool](ctx, c, "/api/v1/mcp-tools/"+pathEscape(id), nil)
}

// MCPToolUpdate changes an MCP server's fields.
func (c *Client) MCPToolUpdate(ctx context.Context, id string, in MCPToolUpdate) (*MCPTool, error) {
	return send[MCPTool](ctx, c, http.MethodPatch, "/api/v1/mcp-tools/"+pathEscape(id), in)
}

// MCPToolRefresh connects to an MCP server and stores the tools it lists. It answers with
// the server's record and the response's message: when the server could not be listed,
// LastError (and the message) say why; the emulator's message says it did not connect.
func (c *Client) MCPToolRefresh(ctx context.Context, id string) (*MCPTool, string, error) {
	var env struct {
		Data    *MCPTool `json:"data"`
		Message string   `json:"message"`
	}
	if err := c.do(ctx, http.MethodPost, "/api/v1/mcp-tools/"+pathEscape(id)+"/refresh", nil, nil, &env); err != nil {
		return nil, "", err
	}
	return env.Data, env.Message, nil
}

// MCPToolDelete deletes an MCP server, returning it; the server refuses (409) while an agent
// version uses it.
func (c *Client) MCPToolDelete(ctx context.Context, id string) (*MCPTool, error) {
	return send[MCPTool](ctx, c, http.MethodDelete, "/api/v1/mcp-tools/"+pathEscape(id), nil)
}

// MCPToolTemplates lists the built-in templates of commonly used MCP servers.
func (c *Client) MCPToolTemplates(ctx context.Context, o MCPToolTemplateListOptions) (*List[MCPToolTemplate], error) {
	q := o.values()
	setIf(q, "q", o.Query)
	return list[MCPToolTemplate](ctx, c, "/api/v1/mcp-tools/templates", q)
}

func setBool(q url.Values, k string, v *bool) {
	if v != nil {
		q.Set(k, strconv.FormatBool(*v))
	}
}
