package runtime

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/seed"
	"github.com/agentplane/agentplane/internal/store"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"))
}

func TestLifecycleTable(t *testing.T) {
	all := store.ExecutionStatuses
	allowed := map[string][]string{
		"pending":           {"running", "cancelled"},
		"running":           {"completed", "failed", "cancelled", "awaiting_approval"},
		"awaiting_approval": {"running", "rejected", "cancelled"},
	}
	for _, from := range all {
		for _, to := range all {
			want := false
			for _, a := range allowed[from] {
				want = want || a == to
			}
			if got := store.CanTransition(from, to); got != want {
				t.Errorf("%s -> %s: %v, want %v", from, to, got, want)
			}
		}
		if store.IsTerminal(from) != (allowed[from] == nil) {
			t.Errorf("IsTerminal(%s) wrong", from)
		}
	}
}

// fixture opens a store with a workspace, the catalog and one simple agent.
func fixture(t *testing.T) (*store.Store, *store.Agent) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir()+"/a.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ws, _ := st.WorkspaceCreate(ctx, &store.Workspace{Name: "w", Slug: "w"})
	if err := seed.LoadCatalog(ctx, st); err != nil {
		t.Fatal(err)
	}
	a, err := st.AgentCreate(ctx, &store.Agent{WorkspaceID: ws.ID, Name: "A", Type: "simple", Status: "active"}, &store.AgentConfig{Model: "gpt-4o-mini"}, "")
	if err != nil {
		t.Fatal(err)
	}
	return st, a
}

func newEngine(st *store.Store) *Engine {
	return New(Config{Store: st, Provider: llm.NewSimulated(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Workers: 2})
}

func stop(e *Engine) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e.Stop(ctx)
}

// TestRecovery: a run a dead process left running is failed at start-up with a message saying
// so and a terminal frame; a pending one is picked up and completed.
func TestRecovery(t *testing.T) {
	ctx := context.Background()
	st, a := fixture(t)
	orphan := &store.Execution{WorkspaceID: a.WorkspaceID, AgentID: a.ID, AgentVersionID: a.ActiveVersionID, Source: "api",
		Status: store.StatusRunning, Input: store.JSONObject{"message": "x"}, Metadata: store.JSONObject{}, TimeoutMS: 1000}
	if err := st.ExecutionCreate(ctx, orphan, &store.Trace{WorkspaceID: a.WorkspaceID, Name: "A"}); err != nil {
		t.Fatal(err)
	}
	queued := &store.Execution{WorkspaceID: a.WorkspaceID, AgentID: a.ID, AgentVersionID: a.ActiveVersionID, Source: "api",
		Status: store.StatusPending, Input: store.JSONObject{"message": "queued before the restart"}, Metadata: store.JSONObject{}, TimeoutMS: 1000}
	if err := st.ExecutionCreate(ctx, queued, &store.Trace{WorkspaceID: a.WorkspaceID, Name: "A"}); err != nil {
		t.Fatal(err)
	}
	e := newEngine(st)
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer stop(e)
	if err := e.Start(ctx); err != nil { // a second Start does nothing
		t.Fatal(err)
	}
	x, _ := st.ExecutionGet(ctx, a.WorkspaceID, orphan.ID)
	if x.Status != store.StatusFailed || x.Error == nil || !strings.Contains(*x.Error, "stopped while this execution was running") {
		t.Fatalf("orphan: %+v", x)
	}
	evs, _ := st.EventList(ctx, orphan.ID, 0)
	if len(evs) != 1 || evs[0].Event != "error" {
		t.Fatalf("orphan frames: %+v", evs)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		x, _ = st.ExecutionGet(ctx, a.WorkspaceID, queued.ID)
		if x.Status == store.StatusCompleted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("queued execution never ran: %+v", x)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestCancelBeforeStart: a cancel that lands between registration and the run's start still
// ends the run as cancelled.
func TestCancelQueued(t *testing.T) {
	ctx := context.Background()
	st, a := fixture(t)
	e := newEngine(st)
	// Not started: the queued execution stays pending and is cancelled directly.
	x, run, err := e.Submit(ctx, SubmitRequest{WorkspaceID: a.WorkspaceID, Agent: a, VersionID: a.ActiveVersionID, Config: a.Config,
		Input: map[string]any{"message": "hi"}, Source: "api", Async: true, TimeoutMS: 1000})
	if err != nil || run != nil {
		t.Fatal(err)
	}
	got, err := e.Cancel(ctx, a.WorkspaceID, x.ID)
	if err != nil || got.Status != store.StatusCancelled {
		t.Fatalf("cancel pending: %+v %v", got, err)
	}
	if _, err := e.Cancel(ctx, a.WorkspaceID, x.ID); err == nil {
		t.Fatal("cancelled twice")
	}
	stop(e)
}
