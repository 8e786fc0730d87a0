package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/webhook"
)

func TestAgentWebhookRoutes(t *testing.T) {
	e := newTestEnv(t)
	d := webhook.New(webhook.Config{Store: e.store, Secrets: e.srv.cfg.Secrets})
	t.Cleanup(func() { d.Stop(context.Background()) })
	var mu sync.Mutex
	var verified []error
	var secret string
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		wh, err := standardwebhooks.NewWebhook(secret)
		if err == nil {
			err = wh.Verify(body, r.Header)
		}
		verified = append(verified, err)
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	defer rcv.Close()

	var agentID, plainID, execID, deliveryID, rotated string
	noSecret := func(t *testing.T, b map[string]any) {
		t.Helper()
		s := mustMarshal(b)
		if secret != "" && strings.Contains(s, strings.TrimPrefix(secret, "whsec_")) || strings.Contains(s, `"webhook_secret":`) {
			t.Fatalf("a response carries the webhook secret: %s", s)
		}
	}
	e.run([]scenario{
		{name: "create with webhook", method: "POST", path: "/api/v1/agents", body: `{"name":"Hooked","type":"simple","webhook_url":"` + rcv.URL + `/in"}`, status: 201,
			fields: map[string]any{"data.webhook_url": rcv.URL + "/in", "data.webhook_secret_set": true},
			check: func(t *testing.T, b map[string]any) {
				agentID = lookup(b, "data.id").(string)
				secret, _ = lookup(b, "data.webhook_secret").(string)
				if err := domain.CheckWebhookSecret("webhook_secret", secret); err != nil {
					t.Fatalf("generated secret %q: %v", secret, err)
				}
			}},
		{name: "create without webhook", method: "POST", path: "/api/v1/agents", body: `{"name":"Plain","type":"simple"}`, status: 201,
			fields: map[string]any{"data.webhook_url": nil, "data.webhook_secret_set": false}, check: func(t *testing.T, b map[string]any) {
				plainID = lookup(b, "data.id").(string)
				noSecret(t, b)
			}},
		{name: "create bad scheme", method: "POST", path: "/api/v1/agents", body: `{"name":"X","type":"simple","webhook_url":"ftp://example.com/x"}`, status: 422, code: "validation_error", message: "webhook_url"},
		{name: "create relative url", method: "POST", path: "/api/v1/agents", body: `{"name":"X","type":"simple","webhook_url":"/hooks"}`, status: 422, message: "webhook_url"},
		{name: "create url wrong type", method: "POST", path: "/api/v1/agents", body: `{"name":"X","type":"simple","webhook_url":5}`, status: 400, message: "webhook_url"},
		{name: "create bad secret", method: "POST", path: "/api/v1/agents", body: `{"name":"X","type":"simple","webhook_url":"https://example.com","webhook_secret":"hunter2hunter2"}`, status: 422, message: "webhook_secret",
			check: func(t *testing.T, b map[string]any) {
				if strings.Contains(mustMarshal(b), "hunter2") {
					t.Fatal("the error echoes the secret")
				}
			}},
		{name: "create secret without url", method: "POST", path: "/api/v1/agents", body: `{"name":"X","type":"simple","webhook_secret":"` + webhook.NewSecret() + `"}`, status: 422, message: "webhook_url"},
	})
	e.run([]scenario{
		{name: "get hides secret", method: "GET", path: "/api/v1/agents/" + agentID, status: 200, check: noSecret,
			fields: map[string]any{"data.webhook_secret_set": true, "data.webhook_url": rcv.URL + "/in"}},
		{name: "list hides secret", method: "GET", path: "/api/v1/agents", status: 200, check: noSecret},
		{name: "patch secret without url", method: "PATCH", path: "/api/v1/agents/" + plainID, body: `{"webhook_secret":"` + webhook.NewSecret() + `"}`, status: 422, message: "webhook_url"},
		{name: "patch bad url", method: "PATCH", path: "/api/v1/agents/" + plainID, body: `{"webhook_url":"https://u:p@example.com"}`, status: 422, message: "webhook_url"},
		{name: "patch url generates", method: "PATCH", path: "/api/v1/agents/" + plainID, body: `{"webhook_url":"https://example.com/a"}`, status: 200,
			fields: map[string]any{"data.webhook_secret_set": true}, check: func(t *testing.T, b map[string]any) {
				if s, _ := lookup(b, "data.webhook_secret").(string); domain.CheckWebhookSecret("webhook_secret", s) != nil {
					t.Fatalf("no generated secret: %v", b)
				}
			}},
		{name: "patch url keeps secret", method: "PATCH", path: "/api/v1/agents/" + plainID, body: `{"webhook_url":"https://example.com/b"}`, status: 200, check: noSecret,
			fields: map[string]any{"data.webhook_url": "https://example.com/b", "data.webhook_secret_set": true}},
		{name: "patch clear", method: "PATCH", path: "/api/v1/agents/" + plainID, body: `{"webhook_url":null}`, status: 200, check: noSecret,
			fields: map[string]any{"data.webhook_url": nil, "data.webhook_secret_set": false}},
		{name: "patch clear with secret", method: "PATCH", path: "/api/v1/agents/" + plainID, body: `{"webhook_url":"","webhook_secret":"` + webhook.NewSecret() + `"}`, status: 422, message: "webhook_secret"},
		{name: "rotate without webhook", method: "POST", path: "/api/v1/agents/" + plainID + "/webhook-secret/rotate", status: 409, code: "conflict", message: "webhook_url"},
		{name: "rotate missing agent", method: "POST", path: "/api/v1/agents/nope/webhook-secret/rotate", status: 404, code: "not_found"},
		{name: "execute", method: "POST", path: "/api/v1/agents/" + agentID + "/execute", body: `{"input":{"message":"hi"}}`, status: 200,
			fields: map[string]any{"data.status": "completed"}, check: func(t *testing.T, b map[string]any) { execID = lookup(b, "data.id").(string) }},
	})
	e.run([]scenario{
		{name: "list deliveries", method: "GET", path: "/api/v1/webhook-deliveries", status: 200,
			fields: map[string]any{"pagination.total": 1, "data.0.execution_id": execID, "data.0.status": "pending", "data.0.event_type": "execution.completed",
				"data.0.attempts": 0, "data.0.target_type": "agent", "data.0.target_id": agentID, "data.0.url": rcv.URL + "/in", "data.0.payload": nil},
			check: func(t *testing.T, b map[string]any) {
				deliveryID = lookup(b, "data.0.id").(string)
				noSecret(t, b)
			}},
		{name: "filter execution", method: "GET", path: "/api/v1/webhook-deliveries?execution_id=" + execID + "&status=pending", status: 200, fields: map[string]any{"pagination.total": 1}},
		{name: "filter other execution", method: "GET", path: "/api/v1/webhook-deliveries?execution_id=nope", status: 200, fields: map[string]any{"pagination.total": 0}},
		{name: "filter delivered", method: "GET", path: "/api/v1/webhook-deliveries?status=delivered", status: 200, fields: map[string]any{"pagination.total": 0}},
		{name: "bad status", method: "GET", path: "/api/v1/webhook-deliveries?status=sent", status: 400, code: "bad_request", message: "status"},
		{name: "bad limit", method: "GET", path: "/api/v1/webhook-deliveries?limit=0", status: 400, message: "limit"},
		{name: "missing", method: "GET", path: "/api/v1/webhook-deliveries/nope", status: 404, code: "not_found", message: "webhook delivery nope"},
		{name: "retry missing", method: "POST", path: "/api/v1/webhook-deliveries/nope/retry", status: 404, code: "not_found", message: "webhook delivery nope"},
	})
	e.run([]scenario{{name: "retry pending", method: "POST", path: "/api/v1/webhook-deliveries/" + deliveryID + "/retry", status: 409, code: "conflict", message: "pending"}})
	e.run([]scenario{{name: "get delivery", method: "GET", path: "/api/v1/webhook-deliveries/" + deliveryID, status: 200, check: noSecret,
		fields: map[string]any{"data.id": deliveryID, "data.payload.type": "execution.completed", "data.payload.data.id": execID, "data.payload.data.status": "completed"}}})

	if n, err := d.RunDue(context.Background()); n != 1 || err != nil {
		t.Fatalf("RunDue = %d, %v", n, err)
	}
	mu.Lock()
	if len(verified) != 1 || verified[0] != nil {
		t.Fatalf("receiver verification: %v", verified)
	}
	mu.Unlock()
	e.run([]scenario{
		{name: "delivered", method: "GET", path: "/api/v1/webhook-deliveries/" + deliveryID, status: 200,
			fields: map[string]any{"data.status": "delivered", "data.attempts": 1, "data.last_response_code": 200, "data.next_attempt_at": nil, "data.last_error": nil}},
		{name: "retry delivered", method: "POST", path: "/api/v1/webhook-deliveries/" + deliveryID + "/retry", status: 200,
			fields: map[string]any{"data.status": "pending", "data.attempts": 1, "data.delivered_at": nil}, check: func(t *testing.T, b map[string]any) {
				if lookup(b, "data.next_attempt_at") == nil || lookup(b, "data.expires_at") == nil {
					t.Fatalf("retry: %v", b)
				}
			}},
		{name: "rotate", method: "POST", path: "/api/v1/agents/" + agentID + "/webhook-secret/rotate", status: 200, fields: map[string]any{"data.webhook_secret_set": true},
			check: func(t *testing.T, b map[string]any) {
				rotated, _ = lookup(b, "data.webhook_secret").(string)
				if domain.CheckWebhookSecret("webhook_secret", rotated) != nil || rotated == secret {
					t.Fatalf("rotated secret %q", rotated)
				}
			}},
	})
	// The next run is signed with the rotated secret.
	mu.Lock()
	secret = rotated
	mu.Unlock()
	e.run([]scenario{{name: "execute again", method: "POST", path: "/api/v1/agents/" + agentID + "/execute", body: `{"input":{"message":"hi"}}`, status: 200}})
	// Due now: the retried message (signed with the secret it was written with, so the
	// receiver, holding the rotated one, rejects it) and the new run's (the rotated secret).
	if n, err := d.RunDue(context.Background()); n != 2 || err != nil {
		t.Fatalf("RunDue = %d, %v", n, err)
	}
	mu.Lock()
	if len(verified) != 3 || (verified[1] == nil) == (verified[2] == nil) {
		t.Fatalf("receiver verification after rotation: %v (want one of the two accepted)", verified)
	}
	mu.Unlock()
	if logs := e.logBuf.String(); strings.Contains(logs, strings.TrimPrefix(secret, "whsec_")) {
		t.Fatal("the log holds a webhook secret")
	}
}

// A create replayed with its Idempotency-Key answers without the generated secret: the
// secret is shown once and not kept with the stored response.
func TestAgentWebhookSecretNotReplayed(t *testing.T) {
	e := newTestEnv(t)
	body := `{"name":"Hooked","type":"simple","webhook_url":"https://example.com/in"}`
	h := map[string]string{"Idempotency-Key": "create-hooked-1"}
	var id string
	e.run([]scenario{
		{name: "first", method: "POST", path: "/api/v1/agents", body: body, header: h, status: 201, check: func(t *testing.T, b map[string]any) {
			id = lookup(b, "data.id").(string)
			if s, _ := lookup(b, "data.webhook_secret").(string); domain.CheckWebhookSecret("webhook_secret", s) != nil {
				t.Fatalf("no secret in the first response: %v", b)
			}
		}},
	})
	e.run([]scenario{
		{name: "replay", method: "POST", path: "/api/v1/agents", body: body, header: h, status: 201,
			fields: map[string]any{"data.id": id, "data.webhook_secret": nil, "data.webhook_secret_set": true}},
	})
}

// The delivery log is read with executions:read; agents:read alone is not enough.
func TestWebhookDeliveriesScope(t *testing.T) {
	st, err := store.Open(context.Background(), "memory")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := newTestEnv(t, onStore(st), asServer())
	agentsOnly := e.newKey(&domain.APIKey{Name: "agents", Scopes: domain.Strings{"agents:read"}})
	execs := e.newKey(&domain.APIKey{Name: "execs", Scopes: domain.Strings{"executions:read"}})
	e.run([]scenario{
		{name: "agents:read", method: "GET", path: "/api/v1/webhook-deliveries", header: map[string]string{"X-API-Key": agentsOnly}, status: 403, code: "forbidden", message: "executions:read"},
		{name: "executions:read", method: "GET", path: "/api/v1/webhook-deliveries", header: map[string]string{"X-API-Key": execs}, status: 200, fields: map[string]any{"pagination.total": 0}},
		{name: "rotate needs agents:write", method: "POST", path: "/api/v1/agents/x/webhook-secret/rotate", header: map[string]string{"X-API-Key": execs}, status: 403, message: "agents:write"},
	})
}

// Every way a run of the engine ends writes its message: completed, failed (a model error),
// rejected (denied at approval) and cancelled (while awaiting approval).
func TestWebhookOnEveryTerminalPath(t *testing.T) {
	e := newTestEnv(t)
	d := webhook.New(webhook.Config{Store: e.store, Secrets: e.srv.cfg.Secrets})
	t.Cleanup(func() { d.Stop(context.Background()) })
	ctx := context.Background()
	hook := "https://example.com/hook"
	approval := client.ApprovalConfig{Checkpoints: []client.Checkpoint{{Name: "review", When: "before_output"}}}
	gated, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Gated", Type: "approval", WebhookURL: hook,
		Config: client.AgentConfig{Model: "gpt-4o-mini", Approval: approval}})
	if err != nil {
		t.Fatal(err)
	}
	failing, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Failing", Type: "simple", WebhookURL: hook,
		Config: client.AgentConfig{Model: "gpt-4o-mini", Simulation: client.Simulation{Fail: client.FailAlways(), FailMessage: "model down"}}})
	if err != nil {
		t.Fatal(err)
	}
	in := client.ExecuteRequest{Input: map[string]any{"message": "hi"}}
	want := map[string]string{}
	x, err := e.c.Execute(ctx, failing.ID, in)
	if err != nil || x.Status != "failed" {
		t.Fatalf("failing run: %+v %v", x, err)
	}
	want[x.ID] = "execution.failed"
	for _, end := range []string{"deny", "cancel"} {
		x, err := e.c.Execute(ctx, gated.ID, in)
		if err != nil || x.Status != "awaiting_approval" {
			t.Fatalf("gated run: %+v %v", x, err)
		}
		if end == "deny" {
			_, err = e.c.ExecutionDeny(ctx, x.ID, "no")
			want[x.ID] = "execution.rejected"
		} else {
			_, err = e.c.ExecutionCancel(ctx, x.ID)
			want[x.ID] = "execution.cancelled"
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for id, event := range want {
		l, err := e.c.WebhookDeliveryList(ctx, client.ListWebhookDeliveriesParams{ExecutionID: id})
		if err != nil || len(l.Data) != 1 || l.Data[0].EventType != event || l.Data[0].Status != "pending" {
			t.Fatalf("deliveries of %s: %+v %v (want one %s)", id, l, err, event)
		}
		full, err := e.c.WebhookDeliveryGet(ctx, l.Data[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		if err := json.Unmarshal(full.Payload, &p); err != nil || p.Type != event || p.Data["id"] != id || p.Data["error"] == nil {
			t.Fatalf("payload %s (%v)", full.Payload, err)
		}
	}
}
