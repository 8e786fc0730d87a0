package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm/simulated"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/seed"
	"github.com/agentplane/agentplane/internal/store"
)

// BenchmarkOpenAIOverhead measures, in-process on `serve`'s SQLite store with the simulated
// model, what POST /openai/chat/completions adds over POST /agents/{id}/execute for the same
// run (one user message, sync): each caller alternates the two, so both are measured in the
// same run under the same load. It reports both times per run and openai_over_execute, the
// ratio of the two (goal: at most 1.05), for 1 caller and for 32.
func BenchmarkOpenAIOverhead(b *testing.B) {
	for _, callers := range []int{1, 32} {
		b.Run("callers="+strconv.Itoa(callers), func(b *testing.B) {
			ctx := context.Background()
			st, ws := benchStore(b)
			a, err := st.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: "Helper", Type: "simple", Status: "active"},
				&domain.AgentConfig{Model: "gpt-4o-mini", SystemPrompt: "You are Helper."}, "")
			if err != nil {
				b.Fatal(err)
			}
			key := benchKey(b, st, ws, "*")
			h := benchRunServer(b, st, ws).Handler()
			calls := []struct{ path, body string }{
				{"/api/v1/agents/" + a.ID + "/execute", `{"input":{"message":"What is the capital of France?"}}`},
				{"/api/v1/openai/chat/completions", `{"model":"` + a.ID + `","messages":[{"role":"user","content":"What is the capital of France?"}]}`},
			}
			var spent [2]atomic.Int64
			do := func(i int) {
				req := httptest.NewRequest(http.MethodPost, calls[i].path, strings.NewReader(calls[i].body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+key)
				rec := httptest.NewRecorder()
				t0 := time.Now()
				h.ServeHTTP(rec, req)
				spent[i].Add(int64(time.Since(t0)))
				if rec.Code != http.StatusOK {
					b.Errorf("%s: %d %s", calls[i].path, rec.Code, rec.Body)
				}
			}
			do(0) // warm the key, the agent and the statement caches
			do(1)
			spent[0].Store(0)
			spent[1].Store(0)
			b.ResetTimer()
			var next atomic.Int64
			var wg sync.WaitGroup
			for range callers {
				wg.Go(func() {
					for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
						// Alternate which goes first, so neither always meets a warmer server.
						first := int(n % 2)
						do(first)
						do(1 - first)
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			exec, oai := float64(spent[0].Load())/float64(b.N), float64(spent[1].Load())/float64(b.N)
			b.ReportMetric(exec, "execute_ns/run")
			b.ReportMetric(oai, "openai_ns/run")
			b.ReportMetric(oai/exec, "openai_over_execute")
		})
	}
}

// benchRunServer is benchServer with its engine started, so that sync runs run.
func benchRunServer(b *testing.B, st *store.Store, ws string) *Server {
	b.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng := runtime.New(runtime.Config{Store: runtime.SQLStore{Store: st}, Router: runtime.SimulatedRouter{Model: simulated.New()}, Logger: log})
	if err := eng.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	ds := seed.NewSample(st)
	srv, err := New(Config{Store: st, Logger: log, Secrets: secretbox.NewRandom(), WorkspaceID: ws, Engine: eng, DataSources: ds})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		srv.CloseStreams()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		eng.Stop(ctx)
		ds.Close()
	})
	return srv
}
