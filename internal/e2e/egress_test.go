package e2e

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
	"github.com/agentplane/agentplane/internal/mcpclient"
	"github.com/agentplane/agentplane/internal/mcpclient/mcptest"
)

// TestDenyPrivateEgress: with --deny-private-egress, `serve` refuses to reach model
// providers, MCP servers and data sources on loopback addresses, when connecting; without it,
// the same setup works (other tests).
func TestDenyPrivateEgress(t *testing.T) {
	t.Parallel()
	env := serveEnv(dataDir(t))
	delete(env, "MODELS")
	env["DENY_PRIVATE_EGRESS"] = "true"
	p := start(t, env, "serve")
	c, ctx := p.C, context.Background()
	fake := llmtest.NewOpenAI()
	defer fake.Close()
	fake.Fallback = func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: []string{"reached"}} }
	// The base URL names localhost: the check happens after the name resolves.
	base := strings.Replace(fake.URL, "127.0.0.1", "localhost", 1) + "/v1"
	cred, err := c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "local", Type: "api_key", Provider: "openai", Value: "sk-egress-0000000000",
		Metadata: map[string]any{"base_url": base}})
	if err != nil {
		t.Fatal(err)
	}
	a := mustAgent(t, c, "simple", client.AgentConfig{Model: "gpt-4o-mini"})
	x, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "hi"}})
	if err != nil || x.Status != "failed" || x.Error == nil || !strings.Contains(*x.Error, "egress to 127.0.0.1 is denied") {
		t.Fatalf("a run against a loopback provider: %+v %v", x, err)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Fatalf("the provider was reached %d times", n)
	}
	v, err := c.CredentialValidate(ctx, cred.ID)
	if err != nil || v.Valid || !strings.Contains(v.Message, "denied") {
		t.Fatalf("validate: %+v %v", v, err)
	}
	mcpSrv := mcptest.New(mcpclient.StreamableHTTP)
	defer mcpSrv.Close()
	tool, err := c.MCPToolCreate(ctx, client.McpToolCreateRequest{Name: "Local MCP", Transport: "streamable_http", URL: mcpSrv.Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	if got, msg, err := c.MCPToolRefresh(ctx, tool.ID); err != nil || got.LastError == nil || !strings.Contains(*got.LastError, "denied") {
		t.Fatalf("refresh of a loopback MCP server: %+v %q %v", got, msg, err)
	}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`[{"a":1}]`)) }))
	defer api.Close()
	ds, err := c.DataSourceCreate(ctx, client.DataSourceCreateRequest{Name: "Local API", Type: "http", Config: map[string]any{"base_url": api.URL}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.DataSourceQuery(ctx, ds.ID, client.DataSourceQueryRequest{Query: "/"})
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status < 400 || ae.Status == 500 || !strings.Contains(ae.Message, "denied") {
		t.Fatalf("an http data source on loopback: %v", err)
	}
}
