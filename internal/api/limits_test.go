package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// newServerEnvWith is newServerEnv with the server's Config changed by override.
func newServerEnvWith(t *testing.T, override func(*Config)) *testEnv {
	t.Helper()
	st, err := store.Open(context.Background(), "memory")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return newTestEnv(t, onStore(st), asServer(), withConfig(override))
}

// get sends GET path with the raw key and returns the response and its body, checked against
// the OpenAPI document.
func (e *testEnv) getWithKey(t *testing.T, path, key string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", e.ts.URL+path, nil)
	req.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := e.oapi.Validate("GET", req.URL.Path, resp.StatusCode, raw); err != nil {
		t.Fatalf("response breaks the OpenAPI contract: %v", err)
	}
	covered.Store("GET "+req.URL.Path, true)
	return resp, raw
}

func TestRateLimitPerKey(t *testing.T) {
	// A bucket of 3 that refills about once every 17 minutes: the fourth request is refused.
	e := newServerEnvWith(t, func(c *Config) { c.RateLimit, c.RateBurst = 0.001, 3 })
	other := e.newKey(&domain.APIKey{Name: "other", Scopes: domain.Strings{"*"}})
	for i, want := range []int{2, 1, 0} {
		resp, raw := e.getWithKey(t, "/api/v1/agents", e.key)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: status %d: %s", i, resp.StatusCode, raw)
		}
		if got := resp.Header.Get("RateLimit-Remaining"); got != strconv.Itoa(want) {
			t.Fatalf("request %d: RateLimit-Remaining %q, want %d", i, got, want)
		}
		if resp.Header.Get("RateLimit-Limit") != "3" || resp.Header.Get("RateLimit-Reset") == "" {
			t.Fatalf("request %d: headers %v", i, resp.Header)
		}
	}
	resp, raw := e.getWithKey(t, "/api/v1/agents", e.key)
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(raw), `"rate_limited"`) {
		t.Fatalf("after the burst: status %d: %s", resp.StatusCode, raw)
	}
	if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || ra < 1 {
		t.Fatalf("Retry-After %q", resp.Header.Get("Retry-After"))
	}
	if resp.Header.Get("RateLimit-Limit") != "3" || resp.Header.Get("RateLimit-Remaining") != "0" {
		t.Fatalf("429 headers %v", resp.Header)
	}
	if reset, err := strconv.Atoi(resp.Header.Get("RateLimit-Reset")); err != nil || reset < 1 {
		t.Fatalf("RateLimit-Reset %q", resp.Header.Get("RateLimit-Reset"))
	}
	// Another key of the same workspace has its own bucket.
	resp, raw = e.getWithKey(t, "/api/v1/agents", other)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("RateLimit-Remaining") != "2" {
		t.Fatalf("other key: status %d, remaining %q: %s", resp.StatusCode, resp.Header.Get("RateLimit-Remaining"), raw)
	}
	// Public routes and failed authentication take no token.
	resp, _ = e.getWithKey(t, "/health", "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("RateLimit-Limit") != "" {
		t.Fatalf("health: %d %v", resp.StatusCode, resp.Header)
	}
	e.run([]scenario{
		{name: "limited key in a table", method: "GET", path: "/api/v1/agents", status: 429, code: "rate_limited", message: "rate limit"},
		{name: "bad key is 401, not 429", method: "GET", path: "/api/v1/agents", header: map[string]string{"X-API-Key": "nope"}, status: 401},
	})
}

func TestRateLimitOff(t *testing.T) {
	e := newServerEnv(t) // RateLimit zero
	for range 5 {
		resp, _ := e.getWithKey(t, "/api/v1/agents", e.key)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("RateLimit-Limit") != "" {
			t.Fatalf("status %d headers %v", resp.StatusCode, resp.Header)
		}
	}
	if e.srv.limits != nil {
		t.Fatal("limiter built with RateLimit 0")
	}
}

func TestPlanMaxAgents(t *testing.T) {
	e := newServerEnvWith(t, func(c *Config) { c.Plan.MaxAgents = 2 })
	body := `{"name":"a","type":"simple"}`
	e.run([]scenario{
		{name: "first", method: "POST", path: "/api/v1/agents", body: body, status: 201},
		{name: "second", method: "POST", path: "/api/v1/agents", body: body, status: 201},
		{name: "third", method: "POST", path: "/api/v1/agents", body: body, status: 402, code: "plan_limit_exceeded", message: "max_agents (2)"},
	})
}

func TestPlanMaxExecutionsPerMonth(t *testing.T) {
	e := newServerEnvWith(t, func(c *Config) { c.Plan.MaxExecutionsPerMonth = 2 })
	ctx := context.Background()
	a, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Helper", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.c.ChatSessionCreate(ctx, a.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	agent, sess := "/api/v1/agents/"+a.ID, "/api/v1/chat/sessions/"+s.ID
	const msg = "max_executions_per_month (2)"
	e.run([]scenario{
		{name: "execute", method: "POST", path: agent + "/execute", body: `{"input":{"message":"hi"}}`, status: 200},
		{name: "chat", method: "POST", path: sess + "/messages", body: `{"content":"hi"}`, status: 200},
		{name: "execute over", method: "POST", path: agent + "/execute", body: `{"input":{"message":"hi"}}`, status: 402, code: "plan_limit_exceeded", message: msg},
		{name: "playground over", method: "POST", path: agent + "/playground", body: `{"config":{"model":"gpt-4o"},"input":{"message":"x"}}`, status: 402, message: msg},
		{name: "chat over", method: "POST", path: sess + "/messages", body: `{"content":"hi"}`, status: 402, message: msg},
		{name: "chat stream over", method: "POST", path: sess + "/messages/stream", body: `{"content":"hi"}`, status: 402, message: msg},
		{name: "reads still work", method: "GET", path: "/api/v1/executions", status: 200, fields: map[string]any{"pagination.total": 2}},
	})
}

func TestPlanMaxConcurrentExecutions(t *testing.T) {
	e := newServerEnvWith(t, func(c *Config) { c.Plan.MaxConcurrentExecutions = 1 })
	ctx := context.Background()
	gate, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Gate", Type: "approval", Config: client.AgentConfig{Model: "gpt-4o-mini",
		Approval: client.ApprovalConfig{Checkpoints: []client.Checkpoint{{Name: "review", When: "before_output"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	agent := "/api/v1/agents/" + gate.ID
	var waiting string
	const msg = "max_concurrent_executions (1)"
	e.run([]scenario{
		{name: "awaiting approval", method: "POST", path: agent + "/execute", body: `{"input":{"message":"hi"}}`, status: 202,
			fields: map[string]any{"data.status": "awaiting_approval"}, check: func(t *testing.T, b map[string]any) { waiting = lookup(b, "data.id").(string) }},
		{name: "second while one waits", method: "POST", path: agent + "/execute", body: `{"input":{"message":"hi"}}`, status: 402, code: "plan_limit_exceeded", message: msg},
		{name: "playground while one waits", method: "POST", path: agent + "/playground", body: `{"config":{"model":"gpt-4o","approval":{"checkpoints":[{"name":"r","when":"before_output"}]}},"input":{"message":"x"}}`, status: 402, message: msg},
	})
	e.run([]scenario{
		{name: "deny", method: "POST", path: "/api/v1/executions/" + waiting + "/deny", body: `{"reason":"no"}`, status: 200},
		{name: "room again", method: "POST", path: agent + "/execute", body: `{"input":{"message":"hi"}}`, status: 202, fields: map[string]any{"data.status": "awaiting_approval"}},
	})
}

// TestPlanLimitsConcurrent: simultaneous requests split over two nodes of one database never
// overshoot a plan limit (agents, executions per month, concurrent executions), on both
// dialects: the check and the insert are one transaction under the workspace's plan lock.
func TestPlanLimitsConcurrent(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, url string) {
		plan := func(c *Config) {
			c.Plan = Plan{MaxAgents: 3, MaxExecutionsPerMonth: 5, MaxConcurrentExecutions: 2}
		}
		a := newTestEnv(t, onStore(openTestStore(t, url)), asServer(), withConfig(plan))
		b := newTestEnv(t, onStore(openTestStore(t, url)), asServer(), withConfig(plan))
		nodes := []*testEnv{a, b}
		race := func(path, body string) map[int]int {
			const n = 12
			statuses := make([]int, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() { statuses[i] = nodes[i%2].post(t, path, "", body).status })
			}
			wg.Wait()
			counts := map[int]int{}
			for _, s := range statuses {
				counts[s]++
			}
			return counts
		}
		// One agent exists, whose runs wait for approval (live, and with nothing running that
		// a node would have to stop): two more fit.
		gate, err := a.c.AgentCreate(context.Background(), client.AgentCreateRequest{Name: "Gate", Type: "approval", Config: client.AgentConfig{Model: "gpt-4o-mini",
			Approval: client.ApprovalConfig{Checkpoints: []client.Checkpoint{{Name: "review", When: "before_output"}}}}})
		if err != nil {
			t.Fatal(err)
		}
		agent := gate.ID
		if got := race("/api/v1/agents", `{"name":"more","type":"simple"}`); got[201] != 2 || got[402] != 10 {
			t.Fatalf("agents: %v, want two 201 and ten 402", got)
		}
		// Two may be live at once.
		exec := "/api/v1/agents/" + agent + "/execute"
		if got := race(exec, `{"input":{"message":"hi"}}`); got[202] != 2 || got[402] != 10 {
			t.Fatalf("concurrent executions: %v, want two 202 and ten 402", got)
		}
		if n := executionCount(t, a.store, a.ws); n != 2 {
			t.Fatalf("%d executions", n)
		}
		// Deny them: three more of the month's five remain.
		for _, x := range mustList(t, a, "/api/v1/executions") {
			if ans := a.post(t, "/api/v1/executions/"+x+"/deny", "", `{"reason":"no"}`); ans.status != 200 {
				t.Fatalf("deny: %d %v", ans.status, ans.body)
			}
		}
		b.srv.cfg.Plan.MaxConcurrentExecutions, a.srv.cfg.Plan.MaxConcurrentExecutions = 0, 0
		if got := race(exec, `{"input":{"message":"hi"}}`); got[202] != 3 || got[402] != 9 {
			t.Fatalf("executions per month: %v, want three 202 and nine 402", got)
		}
		if n := executionCount(t, a.store, a.ws); n != 5 {
			t.Fatalf("%d executions, want 5", n)
		}
	})
}

// mustList returns the ids of GET path's items.
func mustList(t *testing.T, e *testEnv, path string) []string {
	t.Helper()
	resp, raw := e.getWithKey(t, path, e.key)
	var body struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, raw)
	}
	var ids []string
	for _, d := range body.Data {
		ids = append(ids, d.ID)
	}
	return ids
}
