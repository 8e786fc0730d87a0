package runtime

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm/simulated"
	"github.com/agentplane/agentplane/internal/seed"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/store/storetest"
)

// dbs are the migrated databases the tests copy: a SQLite file, and a PostgreSQL database
// with TEST_DATABASE_URL.
var dbs = storetest.NewTemplate()

func TestMain(m *testing.M) {
	storetest.Main(m, dbs, goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"))
}

// fixture opens a store on a SQLite file with a workspace, the catalog and one simple agent.
func fixture(t *testing.T) (*store.Store, *domain.Agent) {
	t.Helper()
	st, err := store.Open(context.Background(), dbs.SQLiteFile(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, fixtureAgent(t, st)
}

// fixtureAgent adds a workspace, the catalog and one simple agent to st.
func fixtureAgent(t testing.TB, st *store.Store) *domain.Agent {
	t.Helper()
	ctx := context.Background()
	ws, _ := st.WorkspaceCreate(ctx, &domain.Workspace{Name: "w", Slug: "w"})
	if err := seed.LoadCatalog(ctx, st); err != nil {
		t.Fatal(err)
	}
	a, err := st.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws.ID, Name: "A", Type: "simple", Status: "active"}, &domain.AgentConfig{Model: "gpt-4o-mini"}, "")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func newEngine(st *store.Store) *Engine {
	return New(Config{Store: SQLStore{Store: st}, Router: SimulatedRouter{Model: simulated.New()}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Workers: 2})
}

func stop(e *Engine) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e.Stop(ctx)
}

// ownedRun records a running execution of a owned by node with a lease ending after lease,
// as a node that died would leave it; called marks its pass as having reached a model call.
// session, when set, is locked for it.
func ownedRun(t *testing.T, st *store.Store, a *domain.Agent, node string, lease time.Duration, called bool, session string) *domain.Execution {
	t.Helper()
	ctx := context.Background()
	c := domain.Claim{Node: node, Lease: lease, SeqBlock: seqBlock}
	x := &domain.Execution{WorkspaceID: a.WorkspaceID, AgentID: a.ID, AgentVersionID: a.ActiveVersionID, Source: "api",
		Status: domain.StatusRunning, Input: domain.JSONObject{"message": "x"}, Metadata: domain.JSONObject{}, TimeoutMS: 1000, Claim: &c}
	if session != "" {
		x.SessionID = &session
	}
	if err := st.ExecutionCreate(ctx, x, &domain.Trace{WorkspaceID: a.WorkspaceID, Name: "A"}); err != nil {
		t.Fatal(err)
	}
	if session != "" {
		if err := st.ChatSessionLock(ctx, a.WorkspaceID, session, x.ID); err != nil {
			t.Fatal(err)
		}
	}
	if called {
		if ok, err := st.ExecutionMarkModelCalled(ctx, x.ID, domain.Owner{Node: node, Attempt: x.Attempt}); err != nil || !ok {
			t.Fatalf("mark: %v %v", ok, err)
		}
	}
	return x
}

// waitStatus waits (up to 10 s) until an execution reaches status.
func waitStatus(t *testing.T, st *store.Store, ws, id, status string) *domain.Execution {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		x, err := st.ExecutionGet(context.Background(), ws, id)
		if err == nil && x.Status == status {
			return x
		}
		if time.Now().After(deadline) {
			t.Fatalf("execution %s did not become %s: %+v %v", id, status, x, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRecovery: start-up touches only expired leases. A run of a dead node that had reached
// a model call is failed (interrupted, its terminal frame above the ids its node reserved, its
// chat session released); one that had not is queued again and completed; a run another node
// still holds a lease on is left alone; a pending one is picked up and completed.
func TestRecovery(t *testing.T) {
	t.Parallel()
	forEachEngineStore(t, func(t *testing.T, st *store.Store, a *domain.Agent) {
		ctx := context.Background()
		sess, err := st.ChatSessionCreate(ctx, &domain.ChatSession{WorkspaceID: a.WorkspaceID, AgentID: a.ID, Metadata: domain.JSONObject{}})
		if err != nil {
			t.Fatal(err)
		}
		called := ownedRun(t, st, a, "dead-node", time.Millisecond, true, sess.ID)
		fresh := ownedRun(t, st, a, "dead-node", time.Millisecond, false, "")
		held := ownedRun(t, st, a, "live-node", time.Minute, true, "")
		queued := &domain.Execution{WorkspaceID: a.WorkspaceID, AgentID: a.ID, AgentVersionID: a.ActiveVersionID, Source: "api",
			Status: domain.StatusPending, Input: domain.JSONObject{"message": "queued before the restart"}, Metadata: domain.JSONObject{}, TimeoutMS: 1000}
		if err := st.ExecutionCreate(ctx, queued, &domain.Trace{WorkspaceID: a.WorkspaceID, Name: "A"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
		e := newEngine(st)
		if err := e.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer stop(e)
		if err := e.Start(ctx); err != nil { // a second Start does nothing
			t.Fatal(err)
		}
		x, _ := st.ExecutionGet(ctx, a.WorkspaceID, called.ID)
		if x.Status != domain.StatusFailed || x.Error == nil || !strings.Contains(*x.Error, "stopped before it finished") || x.OwnerNode != nil {
			t.Fatalf("orphan: %+v", x)
		}
		evs, _ := st.EventList(ctx, called.ID, 0)
		if len(evs) != 1 || evs[0].Event != "error" || evs[0].Seq != seqBlock+1 {
			t.Fatalf("orphan frames: %+v", evs)
		}
		if s, _ := st.ChatSessionGet(ctx, a.WorkspaceID, sess.ID); s.ActiveExecutionID != nil {
			t.Fatal("the orphan's chat session is still locked")
		}
		done := waitStatus(t, st, a.WorkspaceID, fresh.ID, domain.StatusCompleted)
		if done.Attempt != 2 {
			t.Fatalf("requeued run ran as attempt %d", done.Attempt)
		}
		evs, _ = st.EventList(ctx, fresh.ID, 0)
		if len(evs) == 0 || evs[0].Seq <= seqBlock {
			t.Fatalf("the second pass reused frame ids of the first: %+v", evs)
		}
		waitStatus(t, st, a.WorkspaceID, queued.ID, domain.StatusCompleted)
		if _, err := e.rescuer.rescue(ctx); err != nil {
			t.Fatal(err)
		}
		x, _ = st.ExecutionGet(ctx, a.WorkspaceID, held.ID)
		if x.Status != domain.StatusRunning || x.OwnerNode == nil || *x.OwnerNode != "live-node" {
			t.Fatalf("a run another node holds was touched: %+v", x)
		}
	})
}

// TestCancelBeforeStart: a cancel that lands between registration and the run's start still
// ends the run as cancelled.
func TestCancelQueued(t *testing.T) {
	t.Parallel()
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
	if err != nil || got.Status != domain.StatusCancelled {
		t.Fatalf("cancel pending: %+v %v", got, err)
	}
	if _, err := e.Cancel(ctx, a.WorkspaceID, x.ID); err == nil {
		t.Fatal("cancelled twice")
	}
	stop(e)
}
