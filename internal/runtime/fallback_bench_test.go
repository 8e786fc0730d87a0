package runtime

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
	"github.com/agentplane/agentplane/internal/modelhealth"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
)

// BenchmarkFallbackAfterFailure measures what a fallback adds after its primary fails at
// once (a fake answering 503, no retries): each iteration runs the fallback model alone
// (the baseline) and the primary-then-fallback chain; the p50 of each is reported, and the
// chain's p50 less the baseline's as added-p50-ms. The goal is at most 2 ms added.
func BenchmarkFallbackAfterFailure(b *testing.B) {
	st, err := store.Open(context.Background(), b.TempDir()+"/a.db")
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	a := fixtureAgent(b, st)
	box := secretbox.NewRandom()
	down, up := llmtest.NewOpenAI(), llmtest.NewAnthropic()
	defer down.Close()
	defer up.Close()
	down.Discard, up.Discard = true, true
	down.Fallback = func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Status: 503, ErrorMessage: "down"} }
	up.Fallback = func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: []string{"Hello ", "there."}, Usage: &llmtest.Usage{Prompt: 10, Completion: 2}}
	}
	fakeCredential(b, st, box, a.WorkspaceID, "oa", "openai", down.URL+"/v1", nil)
	fakeCredential(b, st, box, a.WorkspaceID, "an", "anthropic", up.URL, nil)
	// The circuit never opens: every iteration pays for the failed call.
	e := credentialEngine(b, st, "", box, &modelhealth.Circuits{Shared: modelhealth.NewDatabase(st), Threshold: 1 << 30})
	zero := 0
	direct := &domain.AgentConfig{Model: "claude-3-5-haiku-20241022", MaxRetries: &zero}
	chain := &domain.AgentConfig{Model: "gpt-4o-mini", MaxRetries: &zero, FallbackModels: []string{"claude-3-5-haiku-20241022"}}
	timed := func(cfg *domain.AgentConfig, want string) time.Duration {
		start := time.Now()
		x := runOn(b, e, a, cfg)
		d := time.Since(start)
		if x.Status != domain.StatusCompleted || x.Model == nil || *x.Model != want {
			b.Fatalf("run: %s %v answered by %v", x.Status, x.Error, x.Model)
		}
		return d
	}
	timed(direct, direct.Model) // warm the connections and caches
	timed(chain, direct.Model)
	var base, fell []time.Duration
	b.ResetTimer()
	for b.Loop() {
		base = append(base, timed(direct, direct.Model))
		fell = append(fell, timed(chain, direct.Model))
	}
	b.StopTimer()
	p50 := func(ds []time.Duration) float64 {
		s := slices.Clone(ds)
		slices.Sort(s)
		return float64(s[len(s)/2].Microseconds()) / 1000
	}
	b.ReportMetric(p50(base), "direct-p50-ms")
	b.ReportMetric(p50(fell), "fallback-p50-ms")
	b.ReportMetric(p50(fell)-p50(base), "added-p50-ms")
}
