package api

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/mcpclient"
	"github.com/agentplane/agentplane/internal/mcpclient/mcptest"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
)

// mcpServerEnv is a server (not the emulator) whose runs and refreshes reach MCP servers.
func mcpServerEnv(t *testing.T, override func(*Config)) *testEnv {
	t.Helper()
	st, err := store.Open(context.Background(), "memory")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c := mcpclient.New(mcpclient.Options{})
	t.Cleanup(c.Close)
	return newTestEnv(t, onStore(st), asServer(), withConfig(override), withTools(func(st *store.Store, box *secretbox.Box) runtime.ToolServers {
		return &runtime.MCPServers{Store: st, Secrets: box, Client: c}
	}))
}

// TestMCPToolStdioNeedsTheFlag: a server saves stdio MCP tools only with --allow-stdio-mcp,
// and says so; the emulator saves them (it never runs them).
func TestMCPToolStdioNeedsTheFlag(t *testing.T) {
	e := mcpServerEnv(t, nil)
	stdio := `{"name":"Files","transport":"stdio","command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/srv"]}`
	var remote string
	e.run([]scenario{
		{name: "create stdio", method: "POST", path: "/api/v1/mcp-tools", body: stdio, status: 422, message: "--allow-stdio-mcp"},
		{name: "create http", method: "POST", path: "/api/v1/mcp-tools", body: `{"name":"R","url":"https://x.example/mcp"}`, status: 201,
			check: func(t *testing.T, b map[string]any) { remote = lookup(b, "data.id").(string) }},
	})
	e.run([]scenario{
		{name: "patch to stdio", method: "PATCH", path: "/api/v1/mcp-tools/" + remote, body: `{"transport":"stdio","url":"","command":"npx"}`, status: 422, message: "--allow-stdio-mcp"},
	})
	allowed := mcpServerEnv(t, func(c *Config) { c.AllowStdioMCP = true })
	var slack string
	allowed.run([]scenario{
		{name: "create stdio allowed", method: "POST", path: "/api/v1/mcp-tools", body: stdio, status: 201, fields: map[string]any{"data.transport": "stdio", "data.env": map[string]any{}}},
		{name: "create stdio with env", method: "POST", path: "/api/v1/mcp-tools", status: 201,
			body:   `{"name":"Slack","transport":"stdio","command":"npx","args":["-y","@modelcontextprotocol/server-slack"],"env":{"SLACK_TEAM_ID":"T0123"}}`,
			fields: map[string]any{"data.env.SLACK_TEAM_ID": "T0123"}, check: func(t *testing.T, b map[string]any) { slack = lookup(b, "data.id").(string) }},
		{name: "env on http", method: "POST", path: "/api/v1/mcp-tools", body: `{"name":"x","url":"https://x.example/mcp","env":{"A":"b"}}`, status: 422, message: "env"},
		{name: "bad env name", method: "POST", path: "/api/v1/mcp-tools", body: `{"name":"x","transport":"stdio","command":"npx","env":{"A-B":"b"}}`, status: 422, message: "env"},
	})
	allowed.run([]scenario{
		{name: "patch env", method: "PATCH", path: "/api/v1/mcp-tools/" + slack, body: `{"env":{"SLACK_TEAM_ID":"T9","SLACK_CHANNEL_IDS":"C1"}}`, status: 200,
			fields: map[string]any{"data.env.SLACK_TEAM_ID": "T9", "data.env.SLACK_CHANNEL_IDS": "C1"}},
		{name: "to http keeping env", method: "PATCH", path: "/api/v1/mcp-tools/" + slack, body: `{"transport":"sse","url":"https://x.example/sse","command":"","args":[]}`, status: 422, message: "env"},
	})
	newTestEnv(t).run([]scenario{{name: "emulator", method: "POST", path: "/api/v1/mcp-tools", body: stdio, status: 201}})
}

// TestMCPToolCredentialTypes: a server over HTTP takes a token credential; a stdio command
// takes any (in an environment variable).
func TestMCPToolCredentialTypes(t *testing.T) {
	e := mcpServerEnv(t, func(c *Config) { c.AllowStdioMCP = true })
	ctx := context.Background()
	db, err := e.c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "db", Type: "database_url", Provider: "postgres", Value: "postgres://u:p@db/x",
		Metadata: map[string]any{"env": "DATABASE_URI"}})
	if err != nil {
		t.Fatal(err)
	}
	e.run([]scenario{
		{name: "database_url over http", method: "POST", path: "/api/v1/mcp-tools", body: `{"name":"x","url":"https://x.example/mcp","credential_id":"` + db.ID + `"}`,
			status: 422, message: "credential_id: credential " + db.ID + " is of type database_url"},
		{name: "database_url for stdio", method: "POST", path: "/api/v1/mcp-tools",
			body: `{"name":"pg","transport":"stdio","command":"uvx","args":["postgres-mcp"],"credential_id":"` + db.ID + `"}`, status: 201},
	})
}

// TestMCPToolRefresh lists real MCP servers (streamable HTTP and SSE, built with the SDK)
// with the tool's credential, stores their tools, and records a failure without losing them.
func TestMCPToolRefresh(t *testing.T) {
	e := mcpServerEnv(t, nil)
	ctx := context.Background()
	// A server that wants a bearer token, one that wants a custom header, and one whose tool
	// names and schemas agentplane would refuse if a user typed them in.
	bearer := mcptest.New(mcptest.StreamableHTTP)
	defer bearer.Close()
	bearer.Header, bearer.HeaderValue = "Authorization", "Bearer tok-bearer"
	custom := mcptest.New(mcptest.SSE)
	defer custom.Close()
	custom.Header, custom.HeaderValue = "X-Api-Key", "tok-custom"
	odd := mcptest.New(mcptest.StreamableHTTP, mcptest.Tool{Name: "get weather", Description: "Spaces in its name.",
		Schema: json.RawMessage(`{"type":"object","properties":{"q":{"minLength":"two"}}}`),
		Handle: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) { return mcptest.Text("sunny"), nil }})
	defer odd.Close()

	tok, err := e.c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "tok", Type: "bearer_token", Provider: "orders", Value: "tok-bearer"})
	if err != nil {
		t.Fatal(err)
	}
	key, err := e.c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "key", Type: "api_key", Provider: "orders", Value: "tok-custom",
		Metadata: map[string]any{"header": "X-Api-Key"}})
	if err != nil {
		t.Fatal(err)
	}
	create := func(in client.McpToolCreateRequest) string {
		t.Helper()
		tool, err := e.c.MCPToolCreate(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return "/api/v1/mcp-tools/" + tool.ID
	}
	withBearer := create(client.McpToolCreateRequest{Name: "Orders", URL: bearer.Endpoint, CredentialID: tok.ID})
	withHeader := create(client.McpToolCreateRequest{Name: "Old orders", Transport: "sse", URL: custom.Endpoint, CredentialID: key.ID})
	noCredential := create(client.McpToolCreateRequest{Name: "Locked", URL: bearer.Endpoint,
		Tools: []client.MCPToolDef{{Name: "by_hand", Description: "Typed in."}}})
	oddTools := create(client.McpToolCreateRequest{Name: "Odd", URL: odd.Endpoint})
	names := []any{"chart", "fail", "lookup_order", "slow", "stats"}
	e.run([]scenario{
		{name: "streamable with bearer", method: "POST", path: withBearer + "/refresh", status: 200,
			fields: map[string]any{"message": "", "data.last_error": nil, "data.tools.2.name": "lookup_order",
				"data.tools.2.description": "Look up an order by id.", "data.tools.2.input_schema.required": []any{"order_id"}},
			check: func(t *testing.T, b map[string]any) {
				var got []any
				for _, tl := range lookup(b, "data.tools").([]any) {
					got = append(got, tl.(map[string]any)["name"])
				}
				if len(got) != len(names) || lookup(b, "data.refreshed_at") == nil {
					t.Fatalf("tools %v, refreshed_at %v", got, lookup(b, "data.refreshed_at"))
				}
			}},
		{name: "stored", method: "GET", path: withBearer, status: 200, fields: map[string]any{"data.tools.0.name": "chart", "data.last_error": nil}},
		{name: "sse with custom header", method: "POST", path: withHeader + "/refresh", status: 200,
			fields: map[string]any{"data.tools.4.name": "stats", "data.transport": "sse"}},
		{name: "refused without the credential", method: "POST", path: noCredential + "/refresh", status: 200,
			fields: map[string]any{"data.tools.0.name": "by_hand"},
			check: func(t *testing.T, b map[string]any) {
				msg, _ := lookup(b, "message").(string)
				last, _ := lookup(b, "data.last_error").(string)
				if last == "" || !strings.Contains(msg, last) || lookup(b, "data.refreshed_at") == nil {
					t.Fatalf("message %q, last_error %q", msg, last)
				}
			}},
		{name: "the server's word on its tools", method: "POST", path: oddTools + "/refresh", status: 200, fields: map[string]any{"data.tools.0.name": "get weather"}},
		// Saving other fields does not re-check tools the server listed.
		{name: "patch after refresh", method: "PATCH", path: oddTools, body: `{"description":"Weather"}`, status: 200, fields: map[string]any{"data.tools.0.name": "get weather"}},
		{name: "missing", method: "POST", path: "/api/v1/mcp-tools/nope/refresh", status: 404},
	})
	// The client closes its session before the refresh answers; the server may count it as
	// closed a moment later (its handler ends after the response), so wait for it.
	waitFor(t, 5*time.Second, func() bool { return bearer.Open() == 0 && custom.Open() == 0 && odd.Open() == 0 })

	// A server that is gone: the failure is recorded, the tools stay.
	bearer.Close()
	e.run([]scenario{{name: "server gone", method: "POST", path: withBearer + "/refresh", status: 200,
		fields: map[string]any{"data.tools.2.name": "lookup_order"},
		check: func(t *testing.T, b map[string]any) {
			if last, _ := lookup(b, "data.last_error").(string); !strings.Contains(last, bearer.Endpoint) {
				t.Fatalf("last_error %q", last)
			}
		}}})
}

// TestMCPToolRefreshEmulator: the emulator connects to nothing; a record without tools gets
// its template's, and the message says so.
func TestMCPToolRefreshEmulator(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	gh, err := e.c.MCPToolCreate(ctx, client.McpToolCreateRequest{Name: "GitHub", URL: "https://api.githubcopilot.com/mcp/"})
	if err != nil {
		t.Fatal(err)
	}
	own, err := e.c.MCPToolCreate(ctx, client.McpToolCreateRequest{Name: "Own", URL: "https://mcp.example.com/mcp",
		Tools: []client.MCPToolDef{{Name: "mine", Description: "Mine."}}})
	if err != nil {
		t.Fatal(err)
	}
	e.run([]scenario{
		{name: "template", method: "POST", path: "/api/v1/mcp-tools/" + gh.ID + "/refresh", status: 200,
			fields: map[string]any{"data.tools.0.name": "search_repositories", "data.last_error": nil, "message": "not connected: MCP servers are simulated here, so the tools are the record's own (or, when it has none, its template's)"}},
		{name: "own tools", method: "POST", path: "/api/v1/mcp-tools/" + own.ID + "/refresh", status: 200,
			fields: map[string]any{"data.tools.0.name": "mine", "data.tools.1": nil}},
	})
}

// TestAgentConfigTools: config.tools takes ids and {"mcp_tool_id", "names"}, kept as given;
// tool_timeout_ms is bounded.
func TestAgentConfigTools(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	a, err := e.c.MCPToolCreate(ctx, client.McpToolCreateRequest{Name: "A", URL: "https://a.example/mcp",
		Tools: []client.MCPToolDef{{Name: "one"}, {Name: "two"}}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.c.MCPToolCreate(ctx, client.McpToolCreateRequest{Name: "B", URL: "https://b.example/mcp"}) // tools not known yet
	if err != nil {
		t.Fatal(err)
	}
	agent := func(tools string) string {
		return `{"name":"x","type":"agent","config":{"model":"gpt-4o","tool_timeout_ms":5000,"tools":` + tools + `}}`
	}
	e.run([]scenario{
		{name: "both forms", method: "POST", path: "/api/v1/agents", status: 201,
			body:   agent(`["` + a.ID + `",{"mcp_tool_id":"` + b.ID + `","names":["anything"]}]`),
			fields: map[string]any{"data.config.tools.0": a.ID, "data.config.tools.1.mcp_tool_id": b.ID, "data.config.tools.1.names": []any{"anything"}, "data.config.tool_timeout_ms": 5000}},
		{name: "object without names", method: "POST", path: "/api/v1/agents", status: 201,
			body: agent(`[{"mcp_tool_id":"` + a.ID + `"}]`), fields: map[string]any{"data.config.tools.0": a.ID}},
		{name: "a name the server does not offer", method: "POST", path: "/api/v1/agents", status: 422,
			body: agent(`[{"mcp_tool_id":"` + a.ID + `","names":["one","three"]}]`), message: `config.tools[0].names[1]: mcp tool ` + a.ID + ` offers no tool "three" (it offers one, two)`},
		{name: "empty names", method: "POST", path: "/api/v1/agents", status: 422,
			body: agent(`[{"mcp_tool_id":"` + a.ID + `","names":[]}]`), message: "config.tools[0].names"},
		{name: "bad name", method: "POST", path: "/api/v1/agents", status: 422,
			body: agent(`[{"mcp_tool_id":"` + b.ID + `","names":["a b"]}]`), message: "config.tools[0].names[0]"},
		{name: "listed twice", method: "POST", path: "/api/v1/agents", status: 422,
			body: agent(`["` + a.ID + `",{"mcp_tool_id":"` + a.ID + `","names":["one"]}]`), message: "config.tools[1]: mcp tool " + a.ID + " is already listed"},
		{name: "missing", method: "POST", path: "/api/v1/agents", status: 422, body: agent(`[{"mcp_tool_id":"nope"}]`), message: "config.tools[0]"},
		{name: "typo in the object", method: "POST", path: "/api/v1/agents", status: 422,
			body: agent(`[{"mcp_tool_id":"` + a.ID + `","name":["one"]}]`), message: "config.tools[0].name: unknown field; did you mean names?"},
		{name: "not a string or object", method: "POST", path: "/api/v1/agents", status: 400, body: agent(`[7]`), message: "tools"},
		{name: "timeout too long", method: "POST", path: "/api/v1/agents", status: 422,
			body: `{"name":"x","type":"agent","config":{"model":"gpt-4o","tool_timeout_ms":3600001}}`, message: "config.tool_timeout_ms"},
	})
}
