package runtime

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm/simulated"
)

// recorder keeps what the engine reports.
type recorder struct {
	mu    sync.Mutex
	runs  []RunEnd
	calls []ModelCall
}

func (r *recorder) RunEnded(e RunEnd) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs = append(r.runs, e)
}

func (r *recorder) ModelCalled(c ModelCall) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
}

// took returns what was reported since the last call.
func (r *recorder) took() ([]RunEnd, []ModelCall) {
	r.mu.Lock()
	defer r.mu.Unlock()
	runs, calls := r.runs, r.calls
	r.runs, r.calls = nil, nil
	return runs, calls
}

// TestMetricsReported: every way a run ends is reported once, with its agent type and
// provider (its pass's route, or its model's provider when no pass routed it), and every
// model call with its tokens, cost and outcome.
func TestMetricsReported(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, a := fixture(t)
	rec := &recorder{}
	e := New(Config{Store: SQLStore{Store: st}, Router: SimulatedRouter{Model: simulated.New()}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Workers: 2, Metrics: rec})

	// Before the engine starts, nothing claims: a queued run is cancelled directly.
	queued := &domain.Execution{WorkspaceID: a.WorkspaceID, AgentID: a.ID, AgentVersionID: a.ActiveVersionID, Source: "api",
		Status: domain.StatusPending, Input: domain.JSONObject{}, Metadata: domain.JSONObject{}, TimeoutMS: 1000}
	if err := st.ExecutionCreate(ctx, queued, &domain.Trace{WorkspaceID: a.WorkspaceID, Name: "A"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Cancel(ctx, a.WorkspaceID, queued.ID); err != nil {
		t.Fatal(err)
	}
	runs, calls := rec.took()
	if len(runs) != 1 || runs[0].Status != domain.StatusCancelled || runs[0].AgentType != "simple" || runs[0].Provider != "simulated" || len(calls) != 0 {
		t.Fatalf("cancelled while queued: %+v %+v", runs, calls)
	}

	// A run whose node died after its model call is failed by the rescue at start.
	ownedRun(t, st, a, "gone-node", time.Millisecond, true, "")
	time.Sleep(5 * time.Millisecond)
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer stop(e)
	if runs, _ = rec.took(); len(runs) != 1 || runs[0].Status != domain.StatusFailed || runs[0].AgentType != "simple" {
		t.Fatalf("rescued: %+v", runs)
	}

	// A completed run: its model call, with tokens and the model's price.
	x := submitWith(t, e, a, a.Config, false)
	runs, calls = rec.took()
	if len(runs) != 1 || runs[0] != (RunEnd{Status: domain.StatusCompleted, AgentType: "simple", Provider: "simulated", Duration: runs[0].Duration}) {
		t.Fatalf("completed: %+v", runs)
	}
	got, _ := st.ExecutionGet(ctx, a.WorkspaceID, x.ID)
	if runs[0].Duration != time.Duration(*got.DurationMS)*time.Millisecond {
		t.Fatalf("duration %v, execution's %d ms", runs[0].Duration, *got.DurationMS)
	}
	if len(calls) != 1 || calls[0].Provider != "simulated" || calls[0].Failed || calls[0].PromptTokens != got.TokenUsage.PromptTokens ||
		calls[0].CompletionTokens != got.TokenUsage.CompletionTokens || calls[0].Cost != got.Cost || got.Cost <= 0 {
		t.Fatalf("model call %+v of %+v", calls, got)
	}

	// A failing model call fails the run.
	failing := *a.Config
	failing.Simulation = &domain.Simulation{Fail: &domain.SimFail{All: true}}
	submitWith(t, e, a, &failing, false)
	runs, calls = rec.took()
	if len(runs) != 1 || runs[0].Status != domain.StatusFailed || len(calls) != 1 || !calls[0].Failed || calls[0].Provider != "simulated" {
		t.Fatalf("failed: %+v %+v", runs, calls)
	}

	// Stopped at an approval checkpoint: not an end; denied: rejected.
	cfg := *a.Config
	cfg.Approval = &domain.ApprovalConfig{Checkpoints: []domain.Checkpoint{{Name: "review", When: "before_output"}}}
	waiting := submitWith(t, e, a, &cfg, false)
	if runs, calls = rec.took(); len(runs) != 0 || len(calls) != 1 {
		t.Fatalf("awaiting approval: %+v %+v", runs, calls)
	}
	if _, err := e.Deny(ctx, a.WorkspaceID, waiting.ID, "no", ""); err != nil {
		t.Fatal(err)
	}
	if runs, _ = rec.took(); len(runs) != 1 || runs[0].Status != domain.StatusRejected || runs[0].Provider != "simulated" {
		t.Fatalf("denied: %+v", runs)
	}
}
