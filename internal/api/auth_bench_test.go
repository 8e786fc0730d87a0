package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm/simulated"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/seed"
	"github.com/agentplane/agentplane/internal/store"
)

// BenchmarkAuthCost measures, in-process on `serve`'s SQLite store, the API-key check of a
// warm key against a whole authenticated GET /api/v1/agents, and reports the check's share
// (goal: under 5%).
func BenchmarkAuthCost(b *testing.B) {
	ctx := context.Background()
	st, ws := benchStore(b)
	for range 6 {
		if _, err := st.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: "A", Type: "simple", Status: "active"}, &domain.AgentConfig{Model: "gpt-4o-mini"}, ""); err != nil {
			b.Fatal(err)
		}
	}
	raw := benchKey(b, st, ws, "*")
	srv := benchServer(b, st, ws, secretbox.NewRandom())
	var rt route
	for _, r := range srv.routes {
		if r.op == "listAgents" {
			rt = r
		}
	}
	req := httptest.NewRequest(http.MethodGet, "/api/v1/agents", nil)
	req.Header.Set("X-API-Key", raw)
	if _, err := srv.authenticate(req, rt); err != nil { // warm the key
		b.Fatal(err)
	}
	const n = 20000
	b.ResetTimer()
	var authD, reqD time.Duration
	for range b.N {
		t0 := time.Now()
		for range n {
			if _, err := srv.authenticate(req, rt); err != nil {
				b.Fatal(err)
			}
		}
		authD += time.Since(t0)
		t0 = time.Now()
		for range n {
			w := httptest.NewRecorder()
			srv.Handler().ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				b.Fatalf("list: %d %s", w.Code, w.Body)
			}
		}
		reqD += time.Since(t0)
	}
	b.ReportMetric(float64(authD.Nanoseconds())/float64(n*b.N), "auth_ns")
	b.ReportMetric(float64(reqD.Nanoseconds())/float64(n*b.N), "request_ns")
	b.ReportMetric(float64(authD)/float64(reqD), "auth_share")
}

// benchStore opens serve's SQLite store in a file, with one workspace (its id is returned)
// and the model catalog; it is closed when the benchmark ends.
func benchStore(b *testing.B) (*store.Store, string) {
	b.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, b.TempDir()+"/bench.db")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	ws, err := st.WorkspaceCreate(ctx, &domain.Workspace{Name: "w", Slug: "w"})
	if err != nil {
		b.Fatal(err)
	}
	if err := seed.LoadCatalog(ctx, st); err != nil {
		b.Fatal(err)
	}
	return st, ws.ID
}

// benchKey stores an API key of workspace ws with scopes and returns it.
func benchKey(b *testing.B, st *store.Store, ws string, scopes ...string) string {
	b.Helper()
	raw, err := auth.NewKey()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.APIKeyCreate(context.Background(), &domain.APIKey{WorkspaceID: ws, Name: "k", KeyPrefix: auth.KeyPrefix(raw), Scopes: scopes}, auth.HashKey(raw)); err != nil {
		b.Fatal(err)
	}
	return raw
}

// benchServer is the API over st for workspace ws with the simulated model, as serve builds
// it; queued runs are not worked off. Its streams are closed when the benchmark ends.
func benchServer(b *testing.B, st *store.Store, ws string, box *secretbox.Box) *Server {
	b.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng := runtime.New(runtime.Config{Store: runtime.SQLStore{Store: st}, Router: runtime.SimulatedRouter{Model: simulated.New()}, Logger: log})
	srv, err := New(Config{Store: st, Logger: log, Secrets: box, WorkspaceID: ws, Engine: eng, DataSources: seed.NewSample(st)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.CloseStreams)
	return srv
}
