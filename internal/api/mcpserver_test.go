package api

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
	"github.com/agentplane/agentplane/internal/llm/simulated"
	"github.com/agentplane/agentplane/internal/mcpclient"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
)

// keyTransport sends an API key with every request.
type keyTransport struct{ header, value string }

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(k.header, k.value)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpConnect connects the go-sdk's client to an MCP endpoint of the server with key.
func mcpConnect(t *testing.T, url, header, key string, progress func(*mcp.ProgressNotificationClientRequest)) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if progress != nil {
		opts.ProgressNotificationHandler = func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { progress(r) }
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: keyTransport{header, key}}}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestMCPServer(t *testing.T) {
	t.Parallel()
	o := newOpenAIEnv(t)
	ctx := context.Background()
	slow, err := o.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Slow one!", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini",
		Simulation: client.Simulation{LatencyMs: client.Ptr[int64](300)}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.c.PromptCreate(ctx, client.PromptCreateRequest{Name: "greet", Description: "A greeting.", Template: "Say hello to {{name}}."}); err != nil {
		t.Fatal(err)
	}
	var progress atomic.Int32
	cs := mcpConnect(t, o.ts.URL+"/api/v1/mcp", "Authorization", "Bearer "+o.key, func(*mcp.ProgressNotificationClientRequest) { progress.Add(1) })

	t.Run("tools", func(t *testing.T) {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]*mcp.Tool{}
		for _, tl := range res.Tools {
			byName[tl.Name] = tl
		}
		h := byName["Helper"]
		if len(res.Tools) != 3 || h == nil || byName["Gate"] == nil || byName["Slow_one"] == nil || h.Description != "Answers questions." {
			t.Fatalf("tools %+v", res.Tools)
		}
		if !strings.Contains(mustMarshal(h.InputSchema), `"message"`) {
			t.Fatalf("input schema %s", mustMarshal(h.InputSchema))
		}
	})
	t.Run("call", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Helper", Arguments: map[string]any{"message": "Hi"}, Meta: mcp.Meta{"progressToken": "p1"}})
		if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "Hi there." {
			t.Fatalf("call: %+v %v", res, err)
		}
		// The server sends every progress notification before the result, but the client may
		// hand a notification to its handler after returning the result.
		for wait := time.Now().Add(5 * time.Second); progress.Load() == 0 && time.Now().Before(wait); {
			time.Sleep(10 * time.Millisecond)
		}
		if progress.Load() == 0 {
			t.Fatal("no progress notification for the run's content")
		}
		_, n, _ := o.store.ExecutionList(ctx, o.ws, domain.ExecutionFilter{Source: "mcp", Status: "completed"}, domain.Page{Page: 1, Limit: 10})
		if n != 1 {
			t.Fatalf("%d completed mcp executions, want 1", n)
		}
	})
	t.Run("bad arguments", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Helper", Arguments: map[string]any{}})
		if err != nil || !res.IsError {
			t.Fatalf("call without a message: %+v %v", res, err)
		}
	})
	t.Run("approval", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Gate", Arguments: map[string]any{"message": "Refund"}})
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "awaiting approval") {
			t.Fatalf("call: %+v %v", res, err)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		if _, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "Slow_one", Arguments: map[string]any{"message": "Take your time, tell me a long story"}}); err == nil {
			t.Fatal("a cancelled call answered")
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, n, _ := o.store.ExecutionList(ctx, o.ws, domain.ExecutionFilter{AgentID: slow.ID, Status: "cancelled"}, domain.Page{Page: 1, Limit: 10})
			if n == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the run of a cancelled call was not cancelled")
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	t.Run("prompts", func(t *testing.T) {
		res, err := cs.ListPrompts(ctx, nil)
		if err != nil || len(res.Prompts) != 1 || res.Prompts[0].Arguments[0].Name != "name" {
			t.Fatalf("prompts %+v %v", res, err)
		}
		got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada"}})
		if err != nil || got.Messages[0].Content.(*mcp.TextContent).Text != "Say hello to Ada." {
			t.Fatalf("prompt %+v %v", got, err)
		}
	})
	t.Run("one agent", func(t *testing.T) {
		one := mcpConnect(t, o.ts.URL+"/api/v1/mcp/agents/"+o.helper.ID, "X-API-Key", o.key, nil)
		res, err := one.ListTools(ctx, nil)
		if err != nil || len(res.Tools) != 1 || res.Tools[0].Name != "Helper" {
			t.Fatalf("tools %+v %v", res, err)
		}
	})
	o.run([]scenario{
		{name: "no key", method: "POST", path: "/api/v1/mcp", header: map[string]string{"X-API-Key": ""}, body: `{}`, status: 401, code: "unauthorized", undocumented: true},
		{name: "other workspace's agent", method: "POST", path: "/api/v1/mcp/agents/nope", body: `{}`, status: 404, code: "not_found", undocumented: true},
	})
}

// TestAgentCallsAgentOverMCP: an agent of agentplane uses another agent of the workspace
// through /api/v1/mcp/agents/{id}, configured like any MCP server (a bearer-token credential
// holding an API key): the model's tool call runs the other agent, whose output is the result.
func TestAgentCallsAgentOverMCP(t *testing.T) {
	t.Parallel()
	st, err := store.Open(context.Background(), "memory")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	mc := mcpclient.New(mcpclient.Options{})
	t.Cleanup(mc.Close)
	e := newTestEnv(t, onStore(st), asServer(), withRouter(func(st *store.Store, box *secretbox.Box) runtime.ModelRouter {
		return &runtime.CredentialRouter{Store: st, Secrets: box, Simulated: simulated.New()}
	}), withTools(func(st *store.Store, box *secretbox.Box) runtime.ToolServers {
		return &runtime.MCPServers{Store: st, Secrets: box, Client: mc}
	}))
	fake := llmtest.NewOpenAI()
	t.Cleanup(fake.Close)
	fake.Fallback = func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: []string{"Paris."}} }
	ctx := context.Background()
	if _, err := e.c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "openai", Type: "api_key", Provider: "openai",
		Value: "sk-test000000000000000000000000000000wxyz", Metadata: map[string]any{"base_url": fake.URL}}); err != nil {
		t.Fatal(err)
	}
	helper, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Geographer", Type: "simple", Description: "Knows capitals.", Config: client.AgentConfig{Model: "gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	key, err := e.c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "agentplane key", Type: "bearer_token", Value: e.key})
	if err != nil {
		t.Fatal(err)
	}
	tool, err := e.c.MCPToolCreate(ctx, client.McpToolCreateRequest{Name: "Geographer", Transport: "streamable_http", URL: e.ts.URL + "/api/v1/mcp/agents/" + helper.ID, CredentialID: key.ID})
	if err != nil {
		t.Fatal(err)
	}
	boss, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Boss", Type: "agent", Config: client.AgentConfig{Model: "gpt-4o-mini",
		Tools: []client.AgentConfig_Tools_Item{client.MCPTools(tool.ID)[0]}}})
	if err != nil {
		t.Fatal(err)
	}
	fake.Push(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "Geographer", Args: []string{`{"message":"Capital of France?"}`}}}})
	x, err := e.c.Execute(ctx, boss.ID, client.ExecuteRequest{Input: map[string]any{"message": "Ask the geographer"}})
	if err != nil || x.Status != "completed" {
		t.Fatalf("boss: %+v %v", x, err)
	}
	runs, n, _ := st.ExecutionList(ctx, e.ws, domain.ExecutionFilter{AgentID: helper.ID, Source: "mcp"}, domain.Page{Page: 1, Limit: 10})
	if n != 1 || runs[0].Status != "completed" || runs[0].Input["message"] != "Capital of France?" {
		t.Fatalf("the geographer's runs over MCP: %d %+v", n, runs)
	}
	// The boss's model got the geographer's answer as the tool's result.
	reqs := fake.Requests()
	if !strings.Contains(string(reqs[len(reqs)-1].Raw), `Paris.`) {
		t.Fatalf("the last model request has no tool result: %s", reqs[len(reqs)-1].Raw)
	}
}
