package webhook

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/dbtest"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
)

// BenchmarkDeliver measures the outbox's cost per message once written: claiming it, signing,
// the POST to a loopback receiver answering 204, and recording the outcome (RunDue sends up to
// 100 at once).
func BenchmarkDeliver(b *testing.B) {
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			url := filepath.Join(b.TempDir(), "bench.db") // every run of the function has a fresh database
			if name == "postgres" {
				if url = dbtest.PostgresURL(b); url == "" {
					b.Skip(dbtest.SkipMessage)
				}
			}
			st, err := store.Open(context.Background(), url)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
			defer rcv.Close()
			box := secretbox.NewRandom()
			ctx := context.Background()
			w, err := st.WorkspaceCreate(ctx, &domain.Workspace{Name: "B", Slug: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			secret := NewSecret()
			payload := []byte(`{"type":"execution.completed","timestamp":"2026-01-01T00:00:00.000Z","data":{"id":"x","status":"completed","output":{"content":"a short answer"}}}`)
			for range b.N {
				id := store.NewID()
				if err := st.WebhookDeliveryCreate(ctx, &domain.WebhookDelivery{ID: id, WorkspaceID: w.ID, ExecutionID: "x", TargetType: "agent",
					TargetID: "a", URL: rcv.URL, EventType: "execution.completed", Payload: payload, Secret: box.Seal(w.ID, id, secret)}); err != nil {
					b.Fatal(err)
				}
			}
			d := New(Config{Store: st, Secrets: box, Now: func() time.Time { return time.Now().Add(time.Second) }})
			defer d.Stop(ctx)
			b.ResetTimer()
			n, err := d.RunDue(ctx)
			if err != nil || n != b.N {
				b.Fatalf("RunDue = %d, %v (want %d)", n, err, b.N)
			}
		})
	}
}

// BenchmarkEndExecution measures what the outbox adds to the transaction that ends an
// execution (SQLite file): without a deliverer (no hook), with the hook on an agent without a
// webhook (one indexed read), and with a webhook (the read, the payload and one insert).
func BenchmarkEndExecution(b *testing.B) {
	for _, mode := range []string{"no_hook", "hook_no_webhook", "hook_webhook"} {
		b.Run(mode, func(b *testing.B) {
			st, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			box := secretbox.NewRandom()
			ctx := context.Background()
			w, err := st.WorkspaceCreate(ctx, &domain.Workspace{Name: "B", Slug: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			a, err := st.AgentCreate(ctx, &domain.Agent{WorkspaceID: w.ID, Name: "A", Type: "simple", Status: "active"}, nil, "")
			if err != nil {
				b.Fatal(err)
			}
			if mode != "no_hook" {
				d := New(Config{Store: st, Secrets: box})
				defer d.Stop(ctx)
			}
			if mode == "hook_webhook" {
				if err := st.AgentWebhookSet(ctx, w.ID, a.ID, "https://example.com/hook", box.Seal(w.ID, a.ID, NewSecret())); err != nil {
					b.Fatal(err)
				}
			}
			ids := make([]string, b.N)
			for i := range ids {
				x := &domain.Execution{WorkspaceID: w.ID, AgentID: a.ID, Source: "api", Status: domain.StatusPending, Input: domain.JSONObject{"q": "hi"}, Metadata: domain.JSONObject{}}
				if err := st.ExecutionCreate(ctx, x, &domain.Trace{WorkspaceID: w.ID, Name: "A"}); err != nil {
					b.Fatal(err)
				}
				ids[i] = x.ID
			}
			b.ResetTimer()
			for _, id := range ids {
				if _, err := st.ExecutionTransition(ctx, w.ID, id, domain.StatusCancelled, domain.ExecutionPatch{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
