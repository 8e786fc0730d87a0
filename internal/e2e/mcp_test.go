package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
	"github.com/agentplane/agentplane/internal/mcpclient/mcptest"
)

// TestServeAgentCallsMCPTool runs `serve` with real models: an `agent` over the OpenAI
// protocol (a fake scripted to call a tool, then to answer with what the tool returned)
// calls a tool of a real MCP server (built with the SDK, in-process on httptest) that
// wants a bearer token. The tools come from a refresh; the output is the tool's result; the
// frames and the span describe the call; the session is closed at the run's end.
func TestServeAgentCallsMCPTool(t *testing.T) {
	t.Parallel()
	env := serveEnv(dataDir(t))
	delete(env, "MODELS")
	p := start(t, env, "serve")
	c := p.C
	ctx := context.Background()

	srv := mcptest.New(mcptest.StreamableHTTP)
	defer srv.Close()
	srv.Header, srv.HeaderValue = "Authorization", "Bearer orders-token-0000"
	fake := llmtest.NewOpenAI()
	defer fake.Close()
	// The model calls lookup_order, then answers with the tool's result.
	fake.Fallback = func(req llmtest.Request) llmtest.Reply {
		for _, m := range items(req.Body["messages"]) {
			if m["role"] == "tool" {
				return llmtest.Reply{Text: []string{textOf(m["content"])}}
			}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "lookup_order", Args: []string{`{"order_id":`, `"A-17"}`}}}}
	}
	if _, err := c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "openai", Type: "api_key", Provider: "openai",
		Value: "sk-e2e-mcp-000000000000000000000000", Metadata: map[string]any{"base_url": fake.URL + "/v1"}}); err != nil {
		t.Fatal(err)
	}
	tok, err := c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "orders", Type: "bearer_token", Provider: "orders", Value: "orders-token-0000"})
	if err != nil {
		t.Fatal(err)
	}
	tool, err := c.MCPToolCreate(ctx, client.McpToolCreateRequest{Name: "Orders", URL: srv.Endpoint, CredentialID: tok.ID})
	if err != nil {
		t.Fatal(err)
	}
	tool, msg, err := c.MCPToolRefresh(ctx, tool.ID)
	if err != nil || msg != "" || tool.LastError != nil || tool.RefreshedAt == nil || len(tool.Tools) != 5 {
		t.Fatalf("refresh: %+v %q %v", tool, msg, err)
	}

	a := mustAgent(t, c, "agent", client.AgentConfig{Model: "gpt-4o-mini", SystemPrompt: "You track orders.",
		Tools: []client.AgentConfig_Tools_Item{client.MCPToolNames(tool.ID, "lookup_order")}})
	x, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "Where is order A-17?"}})
	if err != nil || x.Status != "completed" {
		t.Fatalf("execute: %+v %v", x, err)
	}
	const result = "Order A-17 shipped on 2024-05-02 by DHL."
	if got := outputText(x); got != result {
		t.Errorf("output %q, want the tool's result", got)
	}
	// The model was offered only the tool the version selected, under its own name.
	reqs := fake.Requests()
	if tools := items(reqs[0].Body["tools"]); len(tools) != 1 || tools[0]["function"].(map[string]any)["name"] != "lookup_order" {
		t.Errorf("tools sent to the model: %v", reqs[0].Body["tools"])
	}
	if srv.Calls() != 1 || strings.Join(srv.Args(), "") != `{"order_id":"A-17"}` {
		t.Errorf("the server got %d calls: %v", srv.Calls(), srv.Args())
	}

	evs := frames(t, c, x.ID)
	var start, end map[string]any
	for _, ev := range evs {
		switch ev.Event {
		case "tool_start":
			decode(t, []byte(ev.Data), &start)
		case "tool_end":
			decode(t, []byte(ev.Data), &end)
		}
	}
	if start["id"] != "call_1" || start["name"] != "lookup_order" || end["summary"] != result {
		t.Errorf("tool frames %v %v", start, end)
	}
	tr, err := c.TraceGet(ctx, x.TraceID)
	if err != nil {
		t.Fatal(err)
	}
	var span *client.SpanNode
	for _, sp := range tr.AllSpans() {
		if sp.Kind == "tool" {
			span = sp
		}
	}
	if span == nil || string(span.Input) != `{"order_id":"A-17"}` || string(span.Output) != `"`+result+`"` ||
		span.Attributes["server"] != "Orders" || span.Attributes["outcome"] != "ok" {
		t.Fatalf("tool span %+v", span)
	}
	waitUntil(t, "the run's MCP session to be closed", func() bool { return srv.Open() == 0 })

	// Without --allow-stdio-mcp, a stdio server is refused, saying how to allow it.
	_, err = c.MCPToolCreate(ctx, client.McpToolCreateRequest{Name: "Files", Transport: "stdio", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp"}})
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 422 || !strings.Contains(apiErr.Message, "--allow-stdio-mcp") {
		t.Fatalf("stdio without the flag: %v", err)
	}
}

// TestServeAllowsStdioMCP: with ALLOW_STDIO_MCP, serve saves stdio MCP tools.
func TestServeAllowsStdioMCP(t *testing.T) {
	t.Parallel()
	env := serveEnv(dataDir(t))
	env["ALLOW_STDIO_MCP"] = "true"
	p := start(t, env, "serve")
	if _, err := p.C.MCPToolCreate(context.Background(), client.McpToolCreateRequest{Name: "Time", Transport: "stdio", Command: "uvx", Args: []string{"mcp-server-time"}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Logs(), "--allow-stdio-mcp") {
		t.Errorf("start-up did not warn that commands may run:\n%s", p.Logs())
	}
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
