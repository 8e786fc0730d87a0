package api

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/dbtest"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
)

// TestStreamKeyEnds: a stream opened with an API key ends, with a terminal error frame of
// code unauthorized, once the key is revoked, rotated or expires; on another node too (a
// second server on the same store, whose key cache never heard of the change). The run goes
// on, and a stream of another key stays open.
func TestStreamKeyEnds(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		st, err := store.Open(context.Background(), "memory")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		streamKeyEnds(t, st)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		streamKeyEnds(t, openTestPostgres(t))
	})
}

func streamKeyEnds(t *testing.T, st *store.Store) {
	fast := func(c *Config) { c.KeyRecheck = 200 * time.Millisecond }
	a := newTestEnv(t, onStore(st), asServer(), withConfig(fast)) // the node where keys change
	b := newTestEnv(t, onStore(st), asServer(), withConfig(fast)) // the node serving the streams
	ctx := context.Background()
	slow, err := a.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Slow", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini",
		Simulation: client.Simulation{LatencyMs: client.Ptr[int64](60000)}}})
	if err != nil {
		t.Fatal(err)
	}
	x, err := a.c.Execute(ctx, slow.ID, client.ExecuteRequest{Input: map[string]any{"message": "wait"}, Async: client.Ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.c.ExecutionCancel(context.Background(), x.ID) })

	// open starts a stream of x on node b with a new key, and returns the key's id and a
	// channel that gets the stream's terminal frame (or its read error).
	open := func(t *testing.T, in client.APIKeyCreateRequest) (string, <-chan client.StreamEvent) {
		t.Helper()
		k, err := a.c.APIKeyCreate(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		sctx, cancel := context.WithCancel(ctx)
		s, err := client.New(b.ts.URL, client.WithAPIKey(k.Key)).ExecutionStream(sctx, x.ID, -1)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		end, read := make(chan client.StreamEvent, 1), make(chan struct{})
		t.Cleanup(func() {
			cancel() // ends a Next blocked in a read; then the stream can close
			<-read
			s.Close()
		})
		go func() {
			defer close(read)
			for {
				ev, ok, err := s.Next()
				if err != nil || !ok {
					end <- client.StreamEvent{Event: "closed"}
					return
				}
				if ev.Event == "done" || ev.Event == "error" {
					end <- ev
					return
				}
			}
		}()
		return k.ID, end
	}
	wantUnauthorized := func(t *testing.T, end <-chan client.StreamEvent, why string) {
		t.Helper()
		select {
		case ev := <-end:
			var d StreamEventError
			_ = json.Unmarshal([]byte(ev.Data), &d)
			if ev.Event != "error" || d.Code != "unauthorized" || !strings.Contains(d.Message, why) {
				t.Fatalf("the stream ended with %+v, want an error frame of code unauthorized saying %q", ev, why)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the stream is still open 5 s after its key stopped working")
		}
	}

	_, other := open(t, client.APIKeyCreateRequest{Name: "bystander", Scopes: []client.APIKeyCreateRequestScopes{"*"}})
	t.Run("revoked", func(t *testing.T) {
		id, end := open(t, client.APIKeyCreateRequest{Name: "revoked", Scopes: []client.APIKeyCreateRequestScopes{"*"}})
		if _, err := a.c.APIKeyRevoke(ctx, id); err != nil {
			t.Fatal(err)
		}
		wantUnauthorized(t, end, "revoked")
	})
	t.Run("rotated", func(t *testing.T) {
		id, end := open(t, client.APIKeyCreateRequest{Name: "rotated", Scopes: []client.APIKeyCreateRequestScopes{"*"}})
		if _, err := a.c.APIKeyRotate(ctx, id); err != nil {
			t.Fatal(err)
		}
		wantUnauthorized(t, end, "rotated")
	})
	t.Run("expired", func(t *testing.T) {
		at := time.Now().Add(1500 * time.Millisecond)
		_, end := open(t, client.APIKeyCreateRequest{Name: "expiring", Scopes: []client.APIKeyCreateRequestScopes{"*"}, ExpiresAt: at})
		wantUnauthorized(t, end, "expired")
	})
	select {
	case ev := <-other:
		t.Fatalf("the stream of a working key ended: %+v", ev)
	default:
	}
	if got, err := a.c.ExecutionGet(ctx, x.ID); err != nil || got.Status != "running" && got.Status != "pending" {
		t.Fatalf("the run after its streams ended: %+v %v, want it still going", got, err)
	}
}

// BenchmarkStreamKeyRecheck is the cost of one re-check of a stream's API key (a lookup by
// hash past the key cache), which every stream opened with a key makes each KeyRecheck (2 s):
// on serve's SQLite file, and on PostgreSQL when TEST_DATABASE_URL is set.
func BenchmarkStreamKeyRecheck(b *testing.B) {
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			st, ws := benchStore(b)
			if name == "postgres" {
				u := dbtest.PostgresURL(b)
				if u == "" {
					b.Skip(dbtest.SkipMessage)
				}
				var err error
				if st, err = store.Open(context.Background(), u); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { st.Close() })
				w, err := st.WorkspaceCreate(context.Background(), &domain.Workspace{Name: "w", Slug: "w"})
				if err != nil {
					b.Fatal(err)
				}
				ws = w.ID
			}
			srv := benchServer(b, st, ws, secretbox.NewRandom())
			hash := auth.HashKey(benchKey(b, st, ws, "*"))
			k, err := st.APIKeyByHash(context.Background(), hash)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if why := srv.keyEnded(context.Background(), k, hash); why != "" {
					b.Fatal(why)
				}
			}
		})
	}
}
