package webhook

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/dbtest"
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
			w, err := st.WorkspaceCreate(ctx, &store.Workspace{Name: "B", Slug: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			secret := NewSecret()
			payload := []byte(`{"type":"execution.completed","timestamp":"2026-01-01T00:00:00.000Z","data":{"id":"x","status":"completed","output":{"content":"a short answer"}}}`)
			for range b.N {
				id := store.NewID()
				if err := st.WebhookDeliveryCreate(ctx, &store.WebhookDelivery{ID: id, WorkspaceID: w.ID, ExecutionID: "x", TargetType: "agent",
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
