package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/store"
)

// call sends one request with a key and returns the status and error envelope.
func call(t *testing.T, e *testEnv, key, method, path, body string) (int, string, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, e.ts.URL+path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var env struct{ Error, Message string }
	_ = json.Unmarshal(raw, &env)
	return resp.StatusCode, env.Error, env.Message
}

func fill(path string, ids map[string]string) string {
	for name, v := range ids {
		path = strings.ReplaceAll(path, "{"+name+"}", v)
	}
	return path
}

// TestScopeWalk walks the whole route table: a key holding every scope but the one a route
// needs gets 403 naming that scope; a key holding just that scope gets past authorization.
func TestScopeWalk(t *testing.T) {
	e := newServerEnv(t)
	for _, rt := range e.srv.routes {
		if rt.scope == "" || rt.userOnly {
			continue // userOnly routes refuse every key (users_test covers them)
		}
		var others []string
		for _, s := range auth.Scopes() {
			if s != rt.scope && s != auth.ScopeAll {
				others = append(others, s)
			}
		}
		without := e.newKey(&store.APIKey{Name: "without", Scopes: store.Strings(others)})
		with := e.newKey(&store.APIKey{Name: "with", Scopes: store.Strings{rt.scope}})
		path := fill(rt.path, map[string]string{"id": "nope", "version_id": "nope"})
		body := ""
		if rt.method == http.MethodPost || rt.method == http.MethodPatch {
			body = "{}"
		}
		status, code, msg := call(t, e, without, rt.method, path, body)
		if status != http.StatusForbidden || code != "forbidden" || !strings.Contains(msg, rt.scope) {
			t.Errorf("%s without %s: %d %s %q", rt.pattern(), rt.scope, status, code, msg)
		}
		status, _, msg = call(t, e, with, rt.method, path, body)
		if status == http.StatusForbidden || status == http.StatusUnauthorized {
			t.Errorf("%s with %s: %d %q", rt.pattern(), rt.scope, status, msg)
		}
	}
}

// TestWorkspaceWalk creates one of every resource in workspace A, then calls every route that
// names an id with a "*" key of workspace B: each answers 404, never revealing A's resource.
func TestWorkspaceWalk(t *testing.T) {
	e := newServerEnv(t)
	ctx := context.Background()
	c := e.c // workspace A, "*" key
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	a, err := c.AgentCreate(ctx, client.AgentCreate{Name: "A", Type: "approval", Config: &client.AgentConfig{Model: "gpt-4o-mini",
		Approval: &client.ApprovalConfig{Checkpoints: []client.Checkpoint{{Name: "c", When: "before_output"}}}}})
	must(err)
	x, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "hi"}})
	must(err)
	appr, err := c.ApprovalList(ctx, "", client.ListOptions{})
	must(err)
	p, err := c.PromptCreate(ctx, client.PromptCreate{Name: "P", Template: "Hi {{ name }}"})
	must(err)
	cred, err := c.CredentialCreate(ctx, client.CredentialCreate{Name: "C", Type: "api_key", Value: "sk-test-0000000000000000"})
	must(err)
	sess, err := c.ChatSessionCreate(ctx, a.ID, "", nil)
	must(err)
	keys, err := c.APIKeyList(ctx, client.ListOptions{})
	must(err)
	// Resources the SDK helpers above do not cover are made through the store.
	ds, err := e.store.DataSourceCreate(ctx, &store.DataSource{WorkspaceID: e.ws, Name: "D", Type: "http"}, store.JSONObject{"base_url": "https://example.com"}, "")
	must(err)
	tool, err := e.store.MCPToolCreate(ctx, &store.MCPTool{WorkspaceID: e.ws, Name: "T", Transport: "stdio", Command: "npx", Enabled: true})
	must(err)
	g, err := e.store.GuardrailCreate(ctx, &store.Guardrail{WorkspaceID: e.ws, Name: "G", AppliesTo: "both", Action: "block", Enabled: true,
		Scanners: []store.GuardrailScanner{{Type: "max_length", Config: store.JSONObject{"max_chars": 10}}}})
	must(err)
	m, err := e.store.MemoryCreate(ctx, &store.Memory{WorkspaceID: e.ws, Key: "k", Content: "remember", Metadata: store.JSONObject{}})
	must(err)
	pv, err := e.store.PromptGet(ctx, e.ws, p.ID)
	must(err)
	model, err := e.store.LLMModelCreate(ctx, e.ws, &store.LLMModel{ID: "llama3.1:8b", Provider: "ollama", Name: "Llama", ContextWindow: 8192, Capabilities: store.Strings{}})
	must(err)
	dsv, err := e.store.DataSourceGet(ctx, e.ws, ds.ID)
	must(err)
	sc, err := e.store.ScoreConfigCreate(ctx, &store.ScoreConfig{WorkspaceID: e.ws, Name: "ok", DataType: store.ScoreBoolean})
	must(err)
	score, err := e.store.ScoreCreate(ctx, &store.Score{WorkspaceID: e.ws, ConfigID: &sc.ID, Value: ptr(1.0), ExecutionID: &x.ID})
	must(err)
	asset, err := c.AssetUpload(ctx, client.AssetUpload{MimeType: "image/png", Data: []byte("png"), ExecutionID: x.ID})
	must(err)
	trig, err := e.store.TriggerCreate(ctx, &store.Trigger{WorkspaceID: e.ws, AgentID: a.ID, Type: "webhook", Name: "W", Enabled: true,
		Config: store.JSONObject{"respond": "async"}, TokenPrefix: "aph_walk"}, "walk-token-hash", nil, nil)
	must(err)
	dl := &store.WebhookDelivery{ID: store.NewID(), WorkspaceID: e.ws, ExecutionID: x.ID, TargetType: "agent", TargetID: a.ID,
		URL: "https://example.com/hook", EventType: "execution.completed", Payload: []byte(`{}`), Secret: "sealed"}
	must(e.store.WebhookDeliveryCreate(ctx, dl))
	ids := map[string][2]string{ // route prefix -> {id, version_id}
		"/api/v1/agents/":             {a.ID, *a.ActiveVersionID},
		"/api/v1/prompts/":            {p.ID, *pv.ActiveVersionID},
		"/api/v1/data-sources/":       {ds.ID, *dsv.ActiveVersionID},
		"/api/v1/credentials/":        {cred.ID},
		"/api/v1/mcp-tools/":          {tool.ID},
		"/api/v1/guardrails/":         {g.ID},
		"/api/v1/memories/":           {m.ID},
		"/api/v1/executions/":         {x.ID},
		"/api/v1/approvals/":          {appr.Data[0].ID},
		"/api/v1/chat/sessions/":      {sess.ID},
		"/api/v1/traces/":             {x.TraceID},
		"/api/v1/api-keys/":           {keys.Data[0].ID},
		"/api/v1/workspaces/":         {e.ws},
		"/api/v1/llm-models/":         {model.ID},
		"/api/v1/score-configs/":      {sc.ID},
		"/api/v1/scores/":             {score.ID},
		"/api/v1/agent-triggers/":     {trig.ID},
		"/api/v1/assets/":             {asset.ID},
		"/api/v1/webhook-deliveries/": {dl.ID},
	}
	// Workspace B with a key holding every scope.
	wsB, err := e.store.WorkspaceCreate(ctx, &store.Workspace{Name: "B", Slug: "b"})
	must(err)
	rawB, _ := auth.NewKey()
	_, err = e.store.APIKeyCreate(ctx, &store.APIKey{WorkspaceID: wsB.ID, Name: "b", KeyPrefix: auth.KeyPrefix(rawB), Scopes: store.Strings{"*"}}, auth.HashKey(rawB))
	must(err)
	checked := 0
	for _, rt := range e.srv.routes {
		if !strings.Contains(rt.path, "{id}") {
			continue
		}
		var pair [2]string
		found := false
		for prefix, v := range ids {
			if strings.HasPrefix(rt.path, prefix) {
				pair, found = v, true
			}
		}
		if !found {
			t.Errorf("%s: no resource of workspace A to try it on", rt.pattern())
			continue
		}
		if strings.Contains(rt.path, "{version_id}") && pair[1] == "" {
			t.Errorf("%s: no version id", rt.pattern())
			continue
		}
		path := fill(rt.path, map[string]string{"id": pair[0], "version_id": pair[1]})
		body := ""
		if slices.Contains([]string{http.MethodPost, http.MethodPatch}, rt.method) {
			body = "{}"
		}
		status, code, msg := call(t, e, rawB, rt.method, path, body)
		if status != http.StatusNotFound || code != "not_found" {
			t.Errorf("%s from workspace B: %d %s %q (want 404)", rt.pattern(), status, code, msg)
		}
		checked++
	}
	if checked < 40 {
		t.Fatalf("only %d routes checked", checked)
	}
}
