package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/api/openapicheck"
)

const fsTools = `[{"name":"read_file","description":"Read a file","input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}]`

func TestMCPToolRoutes(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	fs, err := e.c.MCPToolCreate(ctx, client.McpToolCreateRequest{Name: "Filesystem", Description: "Local files", Transport: "stdio", Command: "npx",
		Args:  []string{"-y", "@modelcontextprotocol/server-filesystem", "/srv"},
		Tools: []client.MCPToolDef{{Name: "read_file", Description: "Read a file", InputSchema: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	if !fs.Enabled || fs.CredentialID != nil || len(fs.Tools) != 1 || fs.Args[2] != "/srv" {
		t.Fatalf("created %+v", fs)
	}
	id := "/api/v1/mcp-tools/" + fs.ID
	var remoteID string
	e.run([]scenario{
		{name: "list", method: "GET", path: "/api/v1/mcp-tools", status: 200,
			fields: map[string]any{"pagination.total": 1, "pagination.pages": 1, "data.0.name": "Filesystem", "data.0.tools.0.name": "read_file", "data.0.url": ""}},
		{name: "list filter transport miss", method: "GET", path: "/api/v1/mcp-tools?transport=sse", status: 200, fields: map[string]any{"pagination.total": 0}},
		{name: "list filter transport alias", method: "GET", path: "/api/v1/mcp-tools?transport=http", status: 200, fields: map[string]any{"pagination.total": 0}},
		{name: "list filter enabled", method: "GET", path: "/api/v1/mcp-tools?enabled=true&transport=stdio", status: 200, fields: map[string]any{"pagination.total": 1}},
		{name: "list filter disabled", method: "GET", path: "/api/v1/mcp-tools?enabled=false", status: 200, fields: map[string]any{"pagination.total": 0, "data": []any{}}},
		{name: "list q", method: "GET", path: "/api/v1/mcp-tools?q=LOCAL", status: 200, fields: map[string]any{"pagination.total": 1}},
		{name: "list bad enabled", method: "GET", path: "/api/v1/mcp-tools?enabled=yes", status: 400, code: "bad_request", message: "enabled"},
		{name: "list bad transport", method: "GET", path: "/api/v1/mcp-tools?transport=ftp", status: 400, code: "bad_request", message: "transport"},
		{name: "list bad page", method: "GET", path: "/api/v1/mcp-tools?page=-1", status: 400, code: "bad_request", message: "page"},
		{name: "list bad limit", method: "GET", path: "/api/v1/mcp-tools?limit=1000", status: 400, code: "bad_request", message: "limit"},
		{name: "get", method: "GET", path: id, status: 200, fields: map[string]any{"data.id": fs.ID, "data.transport": "stdio", "data.enabled": true, "data.credential_id": nil}},
		{name: "get missing", method: "GET", path: "/api/v1/mcp-tools/nope", status: 404, code: "not_found", message: "mcp tool nope"},
		{name: "create http", method: "POST", path: "/api/v1/mcp-tools", status: 201,
			body: `{"name":"Remote","transport":"http","url":"https://mcp.example.com/mcp","enabled":false,"tools":` + fsTools + `}`,
			fields: map[string]any{"data.url": "https://mcp.example.com/mcp", "data.transport": "streamable_http", "data.enabled": false, "data.args": []any{}, "data.command": "",
				"data.tools.0.input_schema.required": []any{"path"}, "data.refreshed_at": nil, "data.last_error": nil},
			check: func(t *testing.T, b map[string]any) { remoteID = lookup(b, "data.id").(string) }},
		{name: "create malformed", method: "POST", path: "/api/v1/mcp-tools", body: `{"name":"x",`, status: 400, code: "bad_request"},
		{name: "create args wrong type", method: "POST", path: "/api/v1/mcp-tools", body: `{"name":"x","transport":"stdio","command":"npx","args":"-y"}`, status: 400, code: "bad_request", message: "args"},
		{name: "create tools wrong type", method: "POST", path: "/api/v1/mcp-tools", body: `{"name":"x","transport":"stdio","command":"npx","tools":{"a":1}}`, status: 400, message: "tools"},
		{name: "create enabled wrong type", method: "POST", path: "/api/v1/mcp-tools", body: `{"name":"x","transport":"stdio","command":"npx","enabled":"yes"}`, status: 400, message: "enabled"},
		{name: "create blank name", method: "POST", path: "/api/v1/mcp-tools", body: `{"name":"  ","transport":"stdio","command":"npx"}`, status: 422, code: "validation_error", message: "name"},
		{name: "create bad transport", method: "POST", path: "/api/v1/mcp-tools", body: `{"name":"x","transport":"grpc","url":"https://x.example"}`, status: 422, message: "transport"},
		{name: "create default transport", method: "POST", path: "/api/v1/mcp-tools", body: `{"name":"Default","url":"https://x.example/mcp"}`, status: 201,
			fields: map[string]any{"data.transport": "streamable_http"}},
		{name: "create sse", method: "POST", path: "/api/v1/mcp-tools", body: `{"name":"Old","transport":"sse","url":"https://x.example/sse"}`, status: 201,
			fields: map[string]any{"data.transport": "sse"}},
		{name: "create sse with args", method: "POST", path: "/api/v1/mcp-tools", body: `{"name":"x","transport":"sse","url":"https://x.example/sse","args":["-y"]}`, status: 422, message: "args"},
		{name: "create stdio without command", method: "POST", path: "/api/v1/mcp-tools", body: `{"name":"x","transport":"stdio"}`, status: 422, message: "command"},
		{name: "create stdio with url", method: "POST", path: "/api/v1/mcp-tools", body: `{"name":"x","transport":"stdio","command":"npx","url":"https://x.example"}`, status: 422, message: "url"},
		{name: "create http without url", method: "POST", path: "/api/v1/mcp-tools", body: `{"name":"x","transport":"http"}`, status: 422, message: "url"},
		{name: "create http with command", method: "POST", path: "/api/v1/mcp-tools", body: `{"name":"x","transport":"http","url":"https://x.example","command":"npx"}`, status: 422, message: "command"},
		{name: "create http bad scheme", method: "POST", path: "/api/v1/mcp-tools", body: `{"name":"x","transport":"http","url":"ftp://x.example/mcp"}`, status: 422, message: "url"},
		{name: "create http relative url", method: "POST", path: "/api/v1/mcp-tools", body: `{"name":"x","transport":"http","url":"/mcp"}`, status: 422, message: "url"},
		{name: "create http unparsable url", method: "POST", path: "/api/v1/mcp-tools", body: `{"name":"x","transport":"http","url":"https://x.example/%zz"}`, status: 422, message: "url"},
		{name: "create duplicate tool", method: "POST", path: "/api/v1/mcp-tools", body: `{"name":"x","transport":"stdio","command":"npx","tools":[{"name":"a"},{"name":"a"}]}`, status: 422, message: "tools[1].name"},
		{name: "create bad tool name", method: "POST", path: "/api/v1/mcp-tools", body: `{"name":"x","transport":"stdio","command":"npx","tools":[{"name":"read file"}]}`, status: 422, message: "tools[0].name"},
		{name: "create schema does not compile", method: "POST", path: "/api/v1/mcp-tools",
			body:   `{"name":"x","transport":"stdio","command":"npx","tools":[{"name":"a"},{"name":"b","input_schema":{"type":"object","properties":{"q":{"minLength":"two"}}}}]}`,
			status: 422, message: "tools[1].input_schema"},
		{name: "create schema not an object", method: "POST", path: "/api/v1/mcp-tools", body: `{"name":"x","transport":"stdio","command":"npx","tools":[{"name":"a","input_schema":{"type":"string"}}]}`, status: 422, message: "tools[0].input_schema"},
		{name: "create missing credential", method: "POST", path: "/api/v1/mcp-tools", body: `{"name":"x","transport":"http","url":"https://x.example","credential_id":"nope"}`, status: 422, message: "credential_id"},
		{name: "patch", method: "PATCH", path: id, body: `{"description":"Files of /srv","enabled":false}`, status: 200,
			fields: map[string]any{"data.description": "Files of /srv", "data.enabled": false, "data.name": "Filesystem", "data.command": "npx"}},
		{name: "patch to http keeping the command", method: "PATCH", path: id, body: `{"transport":"http","url":"https://x.example"}`, status: 422, message: "command"},
		{name: "patch to http", method: "PATCH", path: id, body: `{"transport":"http","url":"https://files.example/mcp","command":"","args":[]}`, status: 200,
			fields: map[string]any{"data.transport": "streamable_http", "data.args": []any{}, "data.url": "https://files.example/mcp"}},
		{name: "patch bad tools", method: "PATCH", path: id, body: `{"tools":[{"name":"x","input_schema":[]}]}`, status: 422, message: "tools[0].input_schema"},
		{name: "patch missing credential", method: "PATCH", path: id, body: `{"credential_id":"nope"}`, status: 422, message: "credential_id"},
		{name: "patch unlink credential", method: "PATCH", path: id, body: `{"credential_id":""}`, status: 200, fields: map[string]any{"data.credential_id": nil}},
		{name: "patch wrong type", method: "PATCH", path: id, body: `{"enabled":1}`, status: 400, message: "enabled"},
		{name: "patch missing", method: "PATCH", path: "/api/v1/mcp-tools/nope", body: `{"description":"x"}`, status: 404, code: "not_found"},
		{name: "unchanged after failed patches", method: "GET", path: id, status: 200, fields: map[string]any{"data.transport": "streamable_http", "data.tools.0.name": "read_file"}},
	})

	// An agent version that lists a server keeps it from being deleted.
	agent, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Librarian", Type: "agent", Config: client.AgentConfig{Model: "gpt-4o", Tools: client.MCPTools(fs.ID)}})
	if err != nil {
		t.Fatal(err)
	}
	e.run([]scenario{
		{name: "delete in use", method: "DELETE", path: id, status: 409, code: "conflict", message: `agent "Librarian" (` + agent.ID + `), version 1`},
		{name: "still there", method: "GET", path: id, status: 200},
		{name: "delete unused", method: "DELETE", path: "/api/v1/mcp-tools/" + remoteID, status: 200, fields: map[string]any{"data.id": remoteID, "data.name": "Remote"}},
		{name: "gone", method: "GET", path: "/api/v1/mcp-tools/" + remoteID, status: 404},
		{name: "delete missing", method: "DELETE", path: "/api/v1/mcp-tools/" + remoteID, status: 404, code: "not_found"},
	})
	if _, err := e.c.AgentDelete(ctx, agent.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.MCPToolDelete(ctx, fs.ID); err != nil {
		t.Fatalf("delete after its agent is gone: %v", err)
	}
}

func TestMCPToolTemplates(t *testing.T) {
	e := newTestEnv(t)
	e.run([]scenario{
		{name: "all", method: "GET", path: "/api/v1/mcp-tools/templates", status: 200,
			fields: map[string]any{"pagination.total": 12, "pagination.limit": 20, "data.0.id": "filesystem", "data.0.transport": "stdio", "data.0.command": "npx"}},
		{name: "q", method: "GET", path: "/api/v1/mcp-tools/templates?q=GitHub", status: 200,
			fields: map[string]any{"pagination.total": 1, "data.0.id": "github", "data.0.transport": "streamable_http", "data.0.url": "https://api.githubcopilot.com/mcp/"},
			check: func(t *testing.T, b map[string]any) {
				if hint, _ := lookup(b, "data.0.credential_hint").(string); !strings.Contains(hint, "personal access token") {
					t.Fatalf("credential hint %q", hint)
				}
			}},
		{name: "required env", method: "GET", path: "/api/v1/mcp-tools/templates?q=brave", status: 200,
			fields: map[string]any{"data.0.required_env.0.name": "BRAVE_API_KEY", "data.0.tools.0.name": "brave_web_search"}},
		{name: "page", method: "GET", path: "/api/v1/mcp-tools/templates?page=3&limit=5", status: 200,
			fields: map[string]any{"pagination.total": 12, "pagination.pages": 3, "pagination.page": 3, "data.0.id": "git", "data.1.id": "time", "data.2": nil}},
		{name: "past the end", method: "GET", path: "/api/v1/mcp-tools/templates?page=9", status: 200, fields: map[string]any{"data": []any{}, "pagination.total": 12}},
		{name: "no match", method: "GET", path: "/api/v1/mcp-tools/templates?q=zzzz", status: 200, fields: map[string]any{"pagination.total": 0, "data": []any{}}},
		{name: "bad limit", method: "GET", path: "/api/v1/mcp-tools/templates?limit=0", status: 400, code: "bad_request", message: "limit"},
	})
	// A template's configuration is accepted by create as it is.
	ts, err := e.c.MCPToolTemplates(context.Background(), client.ListMCPToolTemplatesParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range ts.Data {
		if _, err := e.c.MCPToolCreate(context.Background(), client.McpToolCreateRequest{Name: tp.Name, Description: tp.Description,
			Transport: client.McpToolCreateRequestTransport(tp.Transport), Command: tp.Command, Args: tp.Args, URL: tp.URL, Tools: tp.Tools}); err != nil {
			t.Errorf("template %s: %v", tp.ID, err)
		}
	}
}

// TestToolsContract checks that the success responses of the MCP tool, guardrail and memory
// routes match the OpenAPI document. (Error responses are left out: the shared error envelope
// schema does not yet allow "data": null.)
func TestToolsContract(t *testing.T) {
	e := newTestEnv(t)
	doc := e.srv.OpenAPI()
	if err := openapicheck.ValidateDocument(doc); err != nil {
		t.Fatal(err)
	}
	v, err := openapicheck.NewResponseValidator(doc)
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path, body string) []byte {
		t.Helper()
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, _ := http.NewRequest(method, e.ts.URL+path, rd)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err := v.Validate(method, path, resp.StatusCode, raw); err != nil {
			t.Errorf("%s %s (%d): %v\n%s", method, path, resp.StatusCode, err, raw)
		}
		return raw
	}
	idOf := func(raw []byte) string {
		var b map[string]any
		if err := json.Unmarshal(raw, &b); err != nil {
			t.Fatal(err)
		}
		id, _ := lookup(b, "data.id").(string)
		return id
	}
	tool := idOf(do("POST", "/api/v1/mcp-tools", `{"name":"Fetch","transport":"stdio","command":"uvx","args":["mcp-server-fetch"],"tools":`+fsTools+`}`))
	do("GET", "/api/v1/mcp-tools", "")
	do("GET", "/api/v1/mcp-tools/"+tool, "")
	do("PATCH", "/api/v1/mcp-tools/"+tool, `{"enabled":false}`)
	do("GET", "/api/v1/mcp-tools/templates", "")
	do("DELETE", "/api/v1/mcp-tools/"+tool, "")

	g := idOf(do("POST", "/api/v1/guardrails", `{"name":"Baseline","scanners":[{"type":"pii","config":{"action":"redact"}},{"type":"json_schema","config":{"schema":{"type":"object"},"action":"warn"}}]}`))
	do("GET", "/api/v1/guardrails?enabled=true", "")
	do("GET", "/api/v1/guardrails/"+g, "")
	do("PATCH", "/api/v1/guardrails/"+g, `{"applies_to":"input"}`)
	do("GET", "/api/v1/guardrails/scanners?limit=100", "")
	do("POST", "/api/v1/guardrails/"+g+"/test", `{"text":"mail bob@example.com"}`)
	do("POST", "/api/v1/guardrails/"+g+"/test", `{"text":"x","stage":"output"}`)
	do("DELETE", "/api/v1/guardrails/"+g, "")

	m := idOf(do("POST", "/api/v1/memories", `{"key":"k","content":"remember this","metadata":{"a":1}}`))
	do("GET", "/api/v1/memories?key=k", "")
	do("GET", "/api/v1/memories/"+m, "")
	do("PATCH", "/api/v1/memories/"+m, `{"content":"and this"}`)
	do("DELETE", "/api/v1/memories/"+m, "")
}
