package client

import (
	"context"
	"net/http"
)

// MCPToolList lists MCP servers, newest first.
func (c *Client) MCPToolList(ctx context.Context, o ListMCPToolsParams) (*List[MCPTool], error) {
	return list[MCPTool](ctx, c, "/api/v1/mcp-tools", query(o))
}

// MCPToolCreate registers an MCP server.
func (c *Client) MCPToolCreate(ctx context.Context, in McpToolCreateRequest, opts ...RequestOption) (*MCPTool, error) {
	return send[MCPTool](ctx, c, http.MethodPost, "/api/v1/mcp-tools", in, opts...)
}

// MCPToolGet gets an MCP server.
func (c *Client) MCPToolGet(ctx context.Context, id string) (*MCPTool, error) {
	return get[MCPTool](ctx, c, "/api/v1/mcp-tools/"+pathEscape(id), nil)
}

// MCPToolUpdate changes an MCP server's fields.
func (c *Client) MCPToolUpdate(ctx context.Context, id string, in McpToolUpdateRequest) (*MCPTool, error) {
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
func (c *Client) MCPToolTemplates(ctx context.Context, o ListMCPToolTemplatesParams) (*List[Template], error) {
	return list[Template](ctx, c, "/api/v1/mcp-tools/templates", query(o))
}
