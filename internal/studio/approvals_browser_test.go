package studio_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/cli"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
	"github.com/agentplane/agentplane/internal/mcpclient/mcptest"
)

// TestStudioToolApprovals: a run whose model (a fake on the OpenAI wire) calls a held tool
// twice waits in the inbox, which shows each call with its arguments in an editable box;
// the reviewer rejects one with a reason and edits the other, and the run completes as
// decided (the edited call ran on the real MCP server, the rejection reached the model).
func TestStudioToolApprovals(t *testing.T) {
	t.Parallel()
	base, st := startServeModels(t, cli.ModelsReal)
	email, password := "ada@example.com", "correct horse battery"
	addUser(t, st, email, password, cli.DefaultWorkspaceID)
	orders := mcptest.New(mcptest.StreamableHTTP)
	defer orders.Close()
	fake := llmtest.NewOpenAI()
	defer fake.Close()
	fake.Fallback = func(req llmtest.Request) llmtest.Reply {
		var results []string
		for _, m := range req.Body["messages"].([]any) {
			if m := m.(map[string]any); m["role"] == "tool" {
				s, _ := m["content"].(string)
				results = append(results, s)
			}
		}
		if len(results) > 0 {
			return llmtest.Reply{Text: []string{strings.Join(results, " | ")}}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "c1", Name: "lookup_order", Args: []string{`{"order_id":"A-17"}`}},
			{ID: "c2", Name: "lookup_order", Args: []string{`{"order_id":"B-2"}`}}}}
	}
	b := newBrowser(t, base)
	b.signIn(base, email, password)
	token := js[string](b, `JSON.parse(sessionStorage.getItem('agentplane.studio')).token`)
	c := client.New(base, client.WithBearer(token), client.WithWorkspace(cli.DefaultWorkspaceID))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "openai", Type: "api_key", Provider: "openai",
		Value: "sk-studio-approvals-000000000000000000", Metadata: map[string]any{"base_url": fake.URL + "/v1"}}); err != nil {
		t.Fatal(err)
	}
	tool, err := c.MCPToolCreate(ctx, client.McpToolCreateRequest{Name: "Orders", URL: orders.Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.MCPToolRefresh(ctx, tool.ID); err != nil {
		t.Fatal(err)
	}
	a, err := c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Orders bot", Type: "agent", Config: client.AgentConfig{Model: "gpt-4o-mini",
		Tools: client.MCPTools(tool.ID), Approval: client.ApprovalConfig{Tools: []client.ToolApproval{{Match: "lookup_*", Mode: "always"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	x, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "Where are my orders?"}, Async: client.Ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	if x, err = c.Wait(ctx, x.ID, 10*time.Millisecond, true); err != nil || x.Status != "awaiting_approval" {
		t.Fatalf("run: %+v %v", x, err)
	}

	b.run(
		hash("#/approvals"),
		chromedp.WaitVisible(chromedp.CSS(`fieldset[data-call="c2"] textarea`)),
	)
	var shown map[string]any
	if err := json.Unmarshal([]byte(js[string](b, `document.querySelector('fieldset[data-call="c1"] textarea').value`)), &shown); err != nil || shown["order_id"] != "A-17" {
		t.Fatalf("arguments shown for c1: %v %v", shown, err)
	}
	b.run(
		chromedp.SetValue(chromedp.CSS(`fieldset[data-call="c2"] textarea`), `{"order_id": "C-3"}`),
		chromedp.Click(chromedp.CSS(`fieldset[data-call="c1"] input.call-reject`)),
		chromedp.SendKeys(chromedp.CSS(`fieldset[data-call="c1"] input.call-reason`), "not yours"),
	)
	b.shot("tool-approval")
	b.run(
		chromedp.Click(chromedp.CSS("section.approval button.approve")),
		chromedp.WaitVisible(chromedp.CSS("#inbox-empty")),
	)
	done, err := c.Wait(ctx, x.ID, 10*time.Millisecond, false)
	want := "The reviewer rejected this call to lookup_order: not yours | Order C-3 shipped on 2024-05-02 by DHL."
	var out struct{ Content string }
	if err == nil {
		_ = json.Unmarshal(done.Output, &out)
	}
	if err != nil || done.Status != "completed" || out.Content != want {
		t.Fatalf("decided run: %+v %v (%q)", done, err, out.Content)
	}
	b.noConsoleErrors()
}
