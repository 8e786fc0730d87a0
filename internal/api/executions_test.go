package api

import (
	"bufio"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
)

func TestExecutionRoutes(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	a, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Helper", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini",
		InputSchema: []byte(`{"type":"object","properties":{"message":{"type":"string","minLength":1}},"required":["message"]}`)}})
	if err != nil {
		t.Fatal(err)
	}
	ap, _ := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Gate", Type: "approval", Config: client.AgentConfig{Model: "gpt-4o-mini",
		Approval: client.ApprovalConfig{Checkpoints: []client.Checkpoint{{Name: "review", When: "before_output"}}}}})
	slow, _ := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Slow", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini",
		Simulation: client.Simulation{LatencyMs: client.Ptr[int64](1000)}}})
	agent := "/api/v1/agents/" + a.ID
	var xid, trace, waiting, pending, approval string
	e.run([]scenario{
		{name: "execute", method: "POST", path: agent + "/execute", body: `{"input":{"message":"hello there"}}`, status: 200,
			fields: map[string]any{"data.status": "completed", "data.source": "api"},
			check: func(t *testing.T, b map[string]any) {
				xid, trace = lookup(b, "data.id").(string), lookup(b, "data.trace_id").(string)
			}},
		{name: "execute async", method: "POST", path: agent + "/execute", body: `{"input":{"message":"later"},"async":true}`, status: 202,
			fields: map[string]any{"data.status": "pending"}},
		{name: "execute from studio", method: "POST", path: agent + "/execute", body: `{"input":{"message":"hi"},"source":"studio"}`, status: 200,
			fields: map[string]any{"data.status": "completed", "data.source": "studio"}},
		{name: "execute bad source", method: "POST", path: agent + "/execute", body: `{"input":{"message":"hi"},"source":"webhook"}`, status: 422, message: "source"},
		{name: "playground from studio", method: "POST", path: agent + "/playground", body: `{"config":{"model":"gpt-4o-mini"},"input":{"message":"hi"},"source":"studio"}`, status: 200,
			fields: map[string]any{"data.source": "studio", "data.metadata.source": "playground"}},
		{name: "playground bad source", method: "POST", path: agent + "/playground", body: `{"config":{"model":"gpt-4o-mini"},"input":{"message":"hi"},"source":"api"}`, status: 422, message: "source"},
		{name: "execute malformed", method: "POST", path: agent + "/execute", body: `{"input":`, status: 400},
		{name: "execute input unwrapped", method: "POST", path: agent + "/execute", body: `{"message":"hi"}`, status: 422, code: "validation_error",
			message: `input: is missing and the body has a top-level field "message" this route does not know: the run's input goes inside "input"`},
		{name: "playground input unwrapped", method: "POST", path: agent + "/playground", body: `{"config":{"model":"gpt-4o-mini"},"message":"hi","async":true}`,
			status: 422, message: `{"input": {"message": …}}`},
		{name: "execute no input, known fields only", method: "POST", path: agent + "/execute", body: `{"async":true}`, status: 422, message: "input: is required"},
		{name: "execute input not an object", method: "POST", path: agent + "/execute", body: `{"input":"text"}`, status: 400, message: "input"},
		{name: "execute schema 422", method: "POST", path: agent + "/execute", body: `{"input":{"message":""}}`, status: 422, message: "/message"},
		{name: "execute bad timeout", method: "POST", path: agent + "/execute", body: `{"input":{"message":"x"},"timeout_ms":-5}`, status: 422, message: "timeout_ms"},
		{name: "execute bad version", method: "POST", path: agent + "/execute", body: `{"input":{"message":"x"},"version_id":"nope"}`, status: 404},
		{name: "execute missing agent", method: "POST", path: "/api/v1/agents/nope/execute", body: `{"input":{}}`, status: 404},
		{name: "playground", method: "POST", path: agent + "/playground", body: `{"config":{"model":"gpt-4o"},"input":{"message":"try"}}`, status: 200,
			fields: map[string]any{"data.source": "playground", "data.metadata.source": "playground", "data.agent_version_id": nil}},
		{name: "playground bad config", method: "POST", path: agent + "/playground", body: `{"config":{"model":"nope"},"input":{}}`, status: 422, message: "config.model"},
		{name: "approval run", method: "POST", path: "/api/v1/agents/" + ap.ID + "/execute", body: `{"input":{"message":"refund"}}`, status: 202,
			fields: map[string]any{"data.status": "awaiting_approval"}, check: func(t *testing.T, b map[string]any) { waiting = lookup(b, "data.id").(string) }},
		{name: "slow async", method: "POST", path: "/api/v1/agents/" + slow.ID + "/execute", body: `{"input":{"message":"slow"},"async":true}`, status: 202,
			check: func(t *testing.T, b map[string]any) { pending = lookup(b, "data.id").(string) }},
	})
	e.run([]scenario{
		{name: "list", method: "GET", path: "/api/v1/executions?agent_id=" + a.ID, status: 200},
		{name: "list by status", method: "GET", path: "/api/v1/executions?status=awaiting_approval", status: 200, fields: map[string]any{"pagination.total": 1}},
		{name: "list bad status", method: "GET", path: "/api/v1/executions?status=done", status: 400, message: "status"},
		{name: "list bad time", method: "GET", path: "/api/v1/executions?created_after=yesterday", status: 400, message: "created_after"},
		{name: "list time window", method: "GET", path: "/api/v1/executions?created_after=2000-01-01T00:00:00Z&source=api", status: 200},
		{name: "list bad limit", method: "GET", path: "/api/v1/executions?limit=0", status: 400},
		{name: "get", method: "GET", path: "/api/v1/executions/" + xid, status: 200, fields: map[string]any{"data.id": xid}},
		{name: "get missing", method: "GET", path: "/api/v1/executions/nope", status: 404, message: "nope"},
		{name: "tree", method: "GET", path: "/api/v1/executions/" + xid + "/tree", status: 200, fields: map[string]any{"data.children": []any{}}},
		{name: "tree missing", method: "GET", path: "/api/v1/executions/nope/tree", status: 404},
		{name: "stream finished", method: "GET", path: "/api/v1/executions/" + xid + "/stream", status: 200, sse: true},
		{name: "stream replay", method: "GET", path: "/api/v1/executions/" + xid + "/stream", header: map[string]string{"Last-Event-ID": "0"}, status: 200, sse: true},
		{name: "stream bad id", method: "GET", path: "/api/v1/executions/" + xid + "/stream", header: map[string]string{"Last-Event-ID": "x"}, status: 400},
		{name: "stream missing", method: "GET", path: "/api/v1/executions/nope/stream", status: 404},
		{name: "traces", method: "GET", path: "/api/v1/traces?execution_id=" + xid, status: 200, fields: map[string]any{"pagination.total": 1}},
		{name: "trace", method: "GET", path: "/api/v1/traces/" + trace, status: 200, fields: map[string]any{"data.execution_id": xid}},
		{name: "trace missing", method: "GET", path: "/api/v1/traces/nope", status: 404},
		{name: "approvals", method: "GET", path: "/api/v1/approvals", status: 200, fields: map[string]any{"pagination.total": 1, "data.0.execution_id": waiting},
			check: func(t *testing.T, b map[string]any) { approval = lookup(b, "data.0.id").(string) }},
		{name: "approvals bad status", method: "GET", path: "/api/v1/approvals?status=maybe", status: 400},
		{name: "approve completed 409", method: "POST", path: "/api/v1/executions/" + xid + "/approve", body: `{}`, status: 409, message: "completed"},
		{name: "deny completed 409", method: "POST", path: "/api/v1/executions/" + xid + "/deny", body: `{}`, status: 409, message: "completed"},
		{name: "cancel completed 409", method: "POST", path: "/api/v1/executions/" + xid + "/cancel", status: 409, message: "completed"},
		{name: "cancel missing", method: "POST", path: "/api/v1/executions/nope/cancel", status: 404},
		{name: "approve wrong type", method: "POST", path: "/api/v1/executions/" + waiting + "/approve", body: `{"comment":5}`, status: 400, message: "comment"},
	})
	e.run([]scenario{
		{name: "approval", method: "GET", path: "/api/v1/approvals/" + approval, status: 200, fields: map[string]any{"data.checkpoint": "review"}},
		{name: "approval missing", method: "GET", path: "/api/v1/approvals/nope", status: 404},
		{name: "approve", method: "POST", path: "/api/v1/executions/" + waiting + "/approve", body: `{"comment":"ok"}`, status: 200},
		{name: "cancel running", method: "POST", path: "/api/v1/executions/" + pending + "/cancel", status: 200, fields: map[string]any{"data.status": "cancelled"}},
	})
	if x, err := e.c.Wait(ctx, waiting, 5*time.Millisecond, false); err != nil || x.Status != "completed" {
		t.Fatalf("approved run: %+v %v", x, err)
	}
	denied, _ := e.c.Execute(ctx, ap.ID, client.ExecuteRequest{Input: map[string]any{"message": "no"}})
	e.run([]scenario{
		{name: "deny", method: "POST", path: "/api/v1/executions/" + denied.ID + "/deny", body: `{"reason":"policy"}`, status: 200,
			fields: map[string]any{"data.status": "rejected", "data.error": "rejected at approval: policy"}},
	})
}

func TestChatRoutes(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	a, _ := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Chatty", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini"}})
	var sid string
	e.run([]scenario{
		{name: "create", method: "POST", path: "/api/v1/chat/sessions", body: `{"agent_id":"` + a.ID + `","title":"Hi"}`, status: 201,
			fields: map[string]any{"data.title": "Hi", "data.message_count": 0}, check: func(t *testing.T, b map[string]any) { sid = lookup(b, "data.id").(string) }},
		{name: "create no agent", method: "POST", path: "/api/v1/chat/sessions", body: `{}`, status: 422, message: "agent_id"},
		{name: "create missing agent", method: "POST", path: "/api/v1/chat/sessions", body: `{"agent_id":"nope"}`, status: 422, message: "agent_id"},
		{name: "create malformed", method: "POST", path: "/api/v1/chat/sessions", body: `[`, status: 400},
	})
	sess := "/api/v1/chat/sessions/" + sid
	e.run([]scenario{
		{name: "list", method: "GET", path: "/api/v1/chat/sessions?agent_id=" + a.ID, status: 200, fields: map[string]any{"pagination.total": 1}},
		{name: "list bad page", method: "GET", path: "/api/v1/chat/sessions?page=-1", status: 400},
		{name: "get", method: "GET", path: sess, status: 200},
		{name: "get missing", method: "GET", path: "/api/v1/chat/sessions/nope", status: 404},
		{name: "patch", method: "PATCH", path: sess, body: `{"title":"Renamed","metadata":{"k":"v"}}`, status: 200, fields: map[string]any{"data.title": "Renamed", "data.metadata.k": "v"}},
		{name: "patch long title", method: "PATCH", path: sess, body: `{"title":"` + string(make([]byte, 0)) + longText(201) + `"}`, status: 422, message: "title"},
		{name: "send", method: "POST", path: sess + "/messages", body: `{"content":"What are your hours?"}`, status: 200,
			fields: map[string]any{"data.role": "assistant"}},
		{name: "send empty", method: "POST", path: sess + "/messages", body: `{"content":"  "}`, status: 422, message: "content"},
		{name: "send wrong type", method: "POST", path: sess + "/messages", body: `{"content":7}`, status: 400, message: "content"},
		{name: "send missing session", method: "POST", path: "/api/v1/chat/sessions/nope/messages", body: `{"content":"x"}`, status: 404},
		{name: "stream", method: "POST", path: sess + "/messages/stream", body: `{"content":"And on Sunday?"}`, status: 200, sse: true},
		{name: "stream missing session", method: "POST", path: "/api/v1/chat/sessions/nope/messages/stream", body: `{"content":"x"}`, status: 404},
		{name: "messages", method: "GET", path: sess + "/messages", status: 200, fields: map[string]any{"pagination.total": 4, "data.0.role": "user", "data.1.role": "assistant"}},
		{name: "messages missing", method: "GET", path: "/api/v1/chat/sessions/nope/messages", status: 404},
		{name: "delete", method: "DELETE", path: sess, status: 200},
		{name: "gone", method: "GET", path: sess, status: 404},
	})
}

func TestSystemRoutes(t *testing.T) {
	e := newTestEnv(t)
	e.run([]scenario{
		{name: "health", method: "GET", path: "/health", status: 200, fields: map[string]any{"data.status": "ok", "data.mode": "emulator"}},
		{name: "openapi", method: "GET", path: "/openapi.json", status: 200, raw: true, fields: map[string]any{"openapi": "3.1.0"}},
		{name: "llm models", method: "GET", path: "/api/v1/llm-models?provider=anthropic&limit=100", status: 200,
			check: func(t *testing.T, b map[string]any) {
				for _, m := range b["data"].([]any) {
					if m.(map[string]any)["provider"] != "anthropic" {
						t.Fatalf("provider filter: %v", m)
					}
				}
			}},
		{name: "llm model", method: "GET", path: "/api/v1/llm-models/gpt-4o", status: 200, fields: map[string]any{"data.context_window": 128000}},
		{name: "llm model missing", method: "GET", path: "/api/v1/llm-models/gpt-0", status: 404, message: "gpt-0"},
		{name: "stats", method: "GET", path: "/admin/store/stats", status: 200, fields: map[string]any{"data.llm_models": 42, "data.agents": 0}},
		{name: "reset", method: "POST", path: "/admin/reset", status: 200, fields: map[string]any{"data.llm_models": 42}},
	})
}

func longText(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'x'
	}
	return string(b)
}

// TestStreamHeartbeat: an idle stream gets ": ping" comments (every 50 ms in tests).
func TestStreamHeartbeat(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	slow, _ := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Slow", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini",
		Simulation: client.Simulation{LatencyMs: client.Ptr[int64](400)}}})
	x, err := e.c.Execute(ctx, slow.ID, client.ExecuteRequest{Input: map[string]any{"message": "wait"}, Async: client.Ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.c.ExecutionCancel(ctx, x.ID)
	req, _ := http.NewRequest("GET", e.ts.URL+"/api/v1/executions/"+x.ID+"/stream", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == ": ping\n" {
			return
		}
	}
	t.Fatal("no heartbeat on an idle stream")
}
