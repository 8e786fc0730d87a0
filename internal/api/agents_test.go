package api

import (
	"context"
	"testing"

	"github.com/agentplane/agentplane/client"
)

func TestAgentRoutes(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	a, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Helper", Type: "simple", Config: client.AgentConfig{
		Model: "gpt-4o", SystemPrompt: "You help {{ name }}.",
		InputSchema: []byte(`{"type":"object","properties":{"question":{"type":"string","minLength":1}},"required":["question"]}`),
	}})
	if err != nil {
		t.Fatal(err)
	}
	id := "/api/v1/agents/" + a.ID
	var v2 string
	e.run([]scenario{
		{name: "list", method: "GET", path: "/api/v1/agents", status: 200, fields: map[string]any{"pagination.total": 1, "pagination.pages": 1, "pagination.total_pages": 1, "data.0.name": "Helper"}},
		{name: "list filter type miss", method: "GET", path: "/api/v1/agents?type=chain", status: 200, fields: map[string]any{"pagination.total": 0}},
		{name: "list q", method: "GET", path: "/api/v1/agents?q=HELP", status: 200, fields: map[string]any{"pagination.total": 1}},
		{name: "list q escapes like", method: "GET", path: "/api/v1/agents?q=%25", status: 200, fields: map[string]any{"pagination.total": 0}},
		{name: "list bad type", method: "GET", path: "/api/v1/agents?type=robot", status: 400, code: "bad_request", message: "type"},
		{name: "list bad page", method: "GET", path: "/api/v1/agents?page=0", status: 400, code: "bad_request", message: "page"},
		{name: "list bad limit", method: "GET", path: "/api/v1/agents?limit=101", status: 400, code: "bad_request", message: "limit"},
		{name: "list limit not int", method: "GET", path: "/api/v1/agents?limit=ten", status: 400, code: "bad_request", message: "limit"},
		{name: "get", method: "GET", path: id, status: 200, fields: map[string]any{"data.active_version": 1, "data.config.model": "gpt-4o"}},
		{name: "get missing", method: "GET", path: "/api/v1/agents/nope", status: 404, code: "not_found", message: "nope"},
		{name: "create malformed", method: "POST", path: "/api/v1/agents", body: `{"name":`, status: 400, code: "bad_request"},
		{name: "create wrong type", method: "POST", path: "/api/v1/agents", body: `{"name":5,"type":"simple"}`, status: 400, code: "bad_request", message: "name"},
		{name: "create array body", method: "POST", path: "/api/v1/agents", body: `[]`, status: 400, code: "bad_request"},
		{name: "create empty name", method: "POST", path: "/api/v1/agents", body: `{"name":" ","type":"simple"}`, status: 422, code: "validation_error", message: "name"},
		{name: "create bad type", method: "POST", path: "/api/v1/agents", body: `{"name":"x","type":"robot"}`, status: 422, message: "type"},
		{name: "create unknown model", method: "POST", path: "/api/v1/agents", body: `{"name":"x","type":"simple","config":{"model":"gpt-0"}}`, status: 422, message: "config.model"},
		{name: "create bad schema", method: "POST", path: "/api/v1/agents", body: `{"name":"x","type":"simple","config":{"model":"gpt-4o","input_schema":{"type":"nonsense"}}}`, status: 422, message: "config.input_schema"},
		{name: "create bad tool ref", method: "POST", path: "/api/v1/agents", body: `{"name":"x","type":"agent","config":{"model":"gpt-4o","tools":["missing"]}}`, status: 422, message: "config.tools[0]"},
		{name: "create chain without steps", method: "POST", path: "/api/v1/agents", body: `{"name":"x","type":"chain","config":{"model":"gpt-4o"}}`, status: 422, message: "config.steps"},
		{name: "create bad approval mode", method: "POST", path: "/api/v1/agents", body: `{"name":"x","type":"agent","config":{"model":"gpt-4o","approval":{"tools":[{"match":"crm__*","mode":"sometimes"}]}}}`, status: 422, message: "config.approval.tools[0].mode"},
		{name: "create bad approval glob", method: "POST", path: "/api/v1/agents", body: `{"name":"x","type":"agent","config":{"model":"gpt-4o","approval":{"tools":[{"match":"crm__[","mode":"always"}]}}}`, status: 422, message: "config.approval.tools[0].match"},
		{name: "create on_timeout without timeout", method: "POST", path: "/api/v1/agents", body: `{"name":"x","type":"agent","config":{"model":"gpt-4o","approval":{"on_timeout":"approve"}}}`, status: 422, message: "config.approval.on_timeout"},
		{name: "create bad on_timeout", method: "POST", path: "/api/v1/agents", body: `{"name":"x","type":"agent","config":{"model":"gpt-4o","approval":{"timeout_seconds":60,"on_timeout":"maybe"}}}`, status: 422, message: "config.approval.on_timeout"},
		{name: "create ask_user on simple", method: "POST", path: "/api/v1/agents", body: `{"name":"x","type":"simple","config":{"model":"gpt-4o","ask_user":true}}`, status: 422, message: "config.ask_user"},
		{name: "create workflow cycle", method: "POST", path: "/api/v1/agents", body: `{"name":"x","type":"workflow","config":{"model":"gpt-4o","steps":[{"id":"a","instruction":"x","depends_on":["b"]},{"id":"b","instruction":"y","depends_on":["a"]}]}}`, status: 422, message: "cycle"},
		{name: "create unknown fields ignored, default config", method: "POST", path: "/api/v1/agents", body: `{"name":"Bare","type":"simple","surprise":1}`, status: 201,
			fields: map[string]any{"data.config.model": DefaultModel, "data.version_count": 1}},
		{name: "patch", method: "PATCH", path: id, body: `{"description":"new","tags":["a"]}`, status: 200, fields: map[string]any{"data.description": "new", "data.tags": []string{"a"}, "data.name": "Helper"}},
		{name: "patch bad status", method: "PATCH", path: id, body: `{"status":"gone"}`, status: 422, message: "status"},
		{name: "new version", method: "POST", path: id + "/versions", body: `{"config":{"model":"gpt-4o-mini"},"notes":"cheaper"}`, status: 201,
			fields: map[string]any{"data.version": 2, "data.is_active": false},
			check:  func(t *testing.T, b map[string]any) { v2 = lookup(b, "data.id").(string) }},
		{name: "active unchanged", method: "GET", path: id, status: 200, fields: map[string]any{"data.active_version": 1, "data.version_count": 2}},
		{name: "versions newest first", method: "GET", path: id + "/versions", status: 200, fields: map[string]any{"data.0.version": 2, "data.1.version": 1, "pagination.total": 2}},
		{name: "version bad config", method: "POST", path: id + "/versions", body: `{"config":{"model":""}}`, status: 422, message: "config.model"},
		{name: "version of missing agent", method: "POST", path: "/api/v1/agents/nope/versions", body: `{"config":{"model":"gpt-4o"}}`, status: 404},
		{name: "version get missing", method: "GET", path: id + "/versions/nope", status: 404, message: "agent version nope"},
		{name: "preview schema failure", method: "POST", path: id + "/preview", body: `{"input":{"question":""}}`, status: 422, message: "/question"},
		{name: "preview", method: "POST", path: id + "/preview", body: `{"input":{"question":"hi","name":"Ada"}}`, status: 200,
			fields: map[string]any{"data.messages.0.content": "You help Ada.", "data.messages.1.content": "hi", "data.missing": []string{}}},
		{name: "method not allowed", method: "PUT", path: id, status: 405, code: "method_not_allowed", undocumented: true},
		{name: "unknown route", method: "GET", path: "/api/v1/nothing", status: 404, code: "not_found", undocumented: true},
	})
	e.run([]scenario{
		{name: "promote", method: "POST", path: id + "/versions/" + v2 + "/promote", status: 200, fields: map[string]any{"data.active_version": 2, "data.config.model": "gpt-4o-mini"}},
		{name: "delete", method: "DELETE", path: id, status: 200, fields: map[string]any{"data.id": a.ID}},
		{name: "gone", method: "GET", path: id, status: 404},
		{name: "versions gone", method: "GET", path: id + "/versions/" + v2, status: 404},
	})
	if n, _ := e.store.StoreStats(ctx); n["agent_versions"] != 1 {
		t.Fatalf("versions of the deleted agent remain: %v", n)
	}
}

func TestIdempotencyKey(t *testing.T) {
	e := newTestEnv(t)
	body := `{"name":"Once","type":"simple"}`
	var first string
	e.run([]scenario{
		{name: "first", method: "POST", path: "/api/v1/agents", body: body, header: map[string]string{"Idempotency-Key": "k1"}, status: 201,
			check: func(t *testing.T, b map[string]any) { first = lookup(b, "data.id").(string) }},
	})
	e.run([]scenario{
		{name: "replay", method: "POST", path: "/api/v1/agents", body: body, header: map[string]string{"Idempotency-Key": "k1"}, status: 201, fields: map[string]any{"data.id": first}},
		{name: "other body", method: "POST", path: "/api/v1/agents", body: `{"name":"Twice","type":"simple"}`, header: map[string]string{"Idempotency-Key": "k1"}, status: 409, code: "conflict"},
		{name: "failure not stored", method: "POST", path: "/api/v1/agents", body: `{"name":"","type":"simple"}`, header: map[string]string{"Idempotency-Key": "k2"}, status: 422},
		{name: "retry after failure", method: "POST", path: "/api/v1/agents", body: `{"name":"","type":"simple"}`, header: map[string]string{"Idempotency-Key": "k2"}, status: 422},
		{name: "count", method: "GET", path: "/api/v1/agents", status: 200, fields: map[string]any{"pagination.total": 1}},
	})
}

// TestAgentDefaultModelSaid: an agent created without a config says in the message which
// model it got; one with a config says nothing.
func TestAgentDefaultModelSaid(t *testing.T) {
	e := newTestEnv(t)
	e.run([]scenario{
		{name: "no config", method: "POST", path: "/api/v1/agents", body: `{"name":"Bare","type":"simple"}`, status: 201,
			fields: map[string]any{"data.config.model": DefaultModel, "message": "no config was sent: version 1 uses the default model " + DefaultModel +
				"; choose another with POST /api/v1/agents/{id}/versions and promote it"}},
		{name: "with config", method: "POST", path: "/api/v1/agents", body: `{"name":"Set","type":"simple","config":{"model":"gpt-4o"}}`, status: 201,
			fields: map[string]any{"message": ""}},
	})
}
