package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/dbtest"
	"github.com/agentplane/agentplane/internal/domain"

	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/llm/simulated"
	"github.com/agentplane/agentplane/internal/store"
)

// pgTestURL returns the URL of a fresh database on the server at TEST_DATABASE_URL, a copy
// of the migrated template (dbs), or skips the test when the variable is unset.
func pgTestURL(t *testing.T) string {
	t.Helper()
	u := dbs.URL(t)
	if u == "" {
		t.Skip(dbtest.SkipMessage)
	}
	return u
}

// forEachEngineStore runs fn on a SQLite store and, with TEST_DATABASE_URL, on a PostgreSQL one.
func forEachEngineStore(t *testing.T, fn func(t *testing.T, st *store.Store, a *domain.Agent)) {
	t.Run("sqlite", func(t *testing.T) {
		st, a := fixture(t)
		fn(t, st, a)
	})
	t.Run("postgres", func(t *testing.T) {
		st := openPG(t, pgTestURL(t))
		fn(t, st, fixtureAgent(t, st))
	})
}

func openPG(t *testing.T, u string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// testModel answers model calls with deltas, recording when each call started and for which
// input (the user message); block makes calls wait until their context ends.
type testModel struct {
	deltas []string
	delay  time.Duration
	block  atomic.Bool

	mu    sync.Mutex
	calls map[string][]time.Time
}

func newTestModel(delay time.Duration, deltas ...string) *testModel {
	return &testModel{deltas: deltas, delay: delay, calls: map[string][]time.Time{}}
}

func (m *testModel) Complete(ctx context.Context, req llm.Request, emit func(llm.Event) error) (*llm.Response, error) {
	tag := ""
	if n := len(req.Messages); n > 0 {
		tag = req.Messages[n-1].Content
	}
	m.mu.Lock()
	m.calls[tag] = append(m.calls[tag], time.Now())
	m.mu.Unlock()
	if m.block.Load() {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	for _, d := range m.deltas {
		if m.delay > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(m.delay):
			}
		}
		if err := emit(llm.Event{Kind: llm.EventContent, Text: d}); err != nil {
			return nil, err
		}
	}
	return &llm.Response{Content: strings.Join(m.deltas, ""), Usage: llm.Usage{PromptTokens: 1, CompletionTokens: 1}, StopReason: llm.StopEnd}, nil
}

// callsOf returns when the calls for input tag started.
func (m *testModel) callsOf(tag string) []time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]time.Time(nil), m.calls[tag]...)
}

// testRouter routes every call to a testModel.
type testRouter struct {
	SimulatedRouter
	m *testModel
}

func (r testRouter) Route(context.Context, string, *domain.AgentConfig, *domain.LLMModel) (*Route, error) {
	return &Route{Provider: r.m, Name: "test"}, nil
}

// engineOn returns a started engine on st with short leases; pgURL joins it to the cluster
// of that PostgreSQL database (empty on SQLite).
func engineOn(t *testing.T, st *store.Store, pgURL string, m *testModel, workers int) *Engine {
	t.Helper()
	var router ModelRouter = SimulatedRouter{Model: simulated.New()}
	if m != nil {
		router = testRouter{m: m}
	}
	e := New(Config{Store: SQLStore{Store: st}, Router: router, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Workers: workers,
		LeaseTimeout: 900 * time.Millisecond, HeartbeatInterval: 150 * time.Millisecond, PostgresURL: pgURL})
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(e) })
	return e
}

// blockedEngineOn returns a started engine on st (SQLite, or PostgreSQL alone) whose model
// holds every call until its context ends, and that model.
func blockedEngineOn(t *testing.T, st *store.Store) (*Engine, *testModel) {
	t.Helper()
	m := newTestModel(0)
	m.block.Store(true)
	return engineOn(t, st, "", m, 2), m
}

// TestCancelClaimRace: 200 runs cancelled while workers claim them. A cancel answers with the
// run recorded cancelled, or with a 409 naming how it ended first; no model call of a
// cancelled run starts after its cancel answered.
func TestCancelClaimRace(t *testing.T) {
	t.Parallel()
	forEachEngineStore(t, func(t *testing.T, st *store.Store, a *domain.Agent) {
		ctx := context.Background()
		m := newTestModel(4*time.Millisecond, "a", "b", "c")
		e := engineOn(t, st, "", m, 8)
		const n = 200
		var wg sync.WaitGroup
		var cancelled, ended atomic.Int32
		sem := make(chan struct{}, 16)
		for i := range n {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				tag := fmt.Sprintf("run %d", i)
				x, _, err := e.Submit(ctx, SubmitRequest{WorkspaceID: a.WorkspaceID, Agent: a, VersionID: a.ActiveVersionID, Config: a.Config,
					Input: map[string]any{"message": tag}, Source: "api", TimeoutMS: 10_000, Async: true})
				if err != nil {
					t.Error(err)
					return
				}
				if i%3 != 0 {
					time.Sleep(time.Duration(i%7) * 300 * time.Microsecond)
				}
				got, err := e.Cancel(ctx, a.WorkspaceID, x.ID)
				answered := time.Now()
				var te *store.TransitionError
				switch {
				case err == nil:
					if got.Status != domain.StatusCancelled {
						t.Errorf("cancel answered %s", got.Status)
					}
					cancelled.Add(1)
					final, _ := st.ExecutionGet(ctx, a.WorkspaceID, x.ID)
					if final.Status != domain.StatusCancelled {
						t.Errorf("cancelled run is %s", final.Status)
					}
					for _, at := range m.callsOf(tag) {
						if at.After(answered) {
							t.Errorf("%s: a model call started %s after its cancel answered", x.ID, at.Sub(answered))
						}
					}
				case errors.As(err, &te):
					ended.Add(1)
					final, _ := st.ExecutionGet(ctx, a.WorkspaceID, x.ID)
					if final.Status != te.From || !domain.IsTerminal(final.Status) || final.Status == domain.StatusCancelled {
						t.Errorf("409 says %s, the run is %s", te.From, final.Status)
					}
				default:
					t.Errorf("cancel: %v", err)
				}
			})
		}
		wg.Wait()
		t.Logf("%d cancelled, %d ended first", cancelled.Load(), ended.Load())
		if cancelled.Load() < n/10 { // the race must be exercised, not mostly missed
			t.Errorf("only %d of %d cancels landed before the run ended", cancelled.Load(), n)
		}
	})
}

// approvalAgent adds an agent with a checkpoint before its output.
func approvalAgent(t *testing.T, st *store.Store, ws string) *domain.Agent {
	t.Helper()
	a, err := st.AgentCreate(context.Background(), &domain.Agent{WorkspaceID: ws, Name: "Gate", Type: "approval", Status: "active"},
		&domain.AgentConfig{Model: "gpt-4o-mini", Approval: &domain.ApprovalConfig{Checkpoints: []domain.Checkpoint{{Name: "review", When: "before_output"}}}}, "")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// awaiting runs a to its checkpoint.
func awaiting(t *testing.T, e *Engine, a *domain.Agent) *domain.Execution {
	t.Helper()
	x, run, err := e.Submit(context.Background(), SubmitRequest{WorkspaceID: a.WorkspaceID, Agent: a, VersionID: a.ActiveVersionID, Config: a.Config,
		Input: map[string]any{"message": "refund 40"}, Source: "api", TimeoutMS: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	<-run.Done()
	if r := run.Result(); r == nil || r.Status != domain.StatusAwaitingApproval {
		t.Fatalf("not awaiting: %+v", r)
	}
	return x
}

// TestApproveCancelDenyRace: approve∥cancel and approve∥deny, 50 times each. Approve and deny
// decide on the waiting run and exactly one wins; the other gets a 409. A cancel decided on
// the waiting run that loses to approve is a 409 too; a cancel that sees the run approved
// and running stops it (both answered 200, final cancelled). Answers always match the end.
func TestApproveCancelDenyRace(t *testing.T) {
	t.Parallel()
	forEachEngineStore(t, func(t *testing.T, st *store.Store, a *domain.Agent) {
		ctx := context.Background()
		e := engineOn(t, st, "", nil, 4)
		gate := approvalAgent(t, st, a.WorkspaceID)
		is409 := func(err error) bool {
			var te *store.TransitionError
			var ce *store.ConflictError
			return errors.As(err, &te) || errors.As(err, &ce)
		}
		counts := map[string]int{}
		for i := range 100 {
			x := awaiting(t, e, gate)
			deny := i%2 == 1
			var approveErr, otherErr error
			var wg sync.WaitGroup
			wg.Go(func() { _, approveErr = e.Approve(ctx, gate.WorkspaceID, x.ID, "ok") })
			wg.Go(func() {
				if deny {
					_, otherErr = e.Deny(ctx, gate.WorkspaceID, x.ID, "no", "")
				} else {
					_, otherErr = e.Cancel(ctx, gate.WorkspaceID, x.ID)
				}
			})
			wg.Wait()
			if approveErr != nil && !is409(approveErr) || otherErr != nil && !is409(otherErr) {
				t.Fatalf("unexpected errors: approve %v, other %v", approveErr, otherErr)
			}
			var final *domain.Execution
			for deadline := time.Now().Add(10 * time.Second); ; {
				final, _ = st.ExecutionGet(ctx, gate.WorkspaceID, x.ID)
				if domain.IsTerminal(final.Status) || time.Now().After(deadline) {
					break
				}
				time.Sleep(2 * time.Millisecond)
			}
			key := fmt.Sprintf("deny=%v approve=%v other=%v final=%s", deny, approveErr == nil, otherErr == nil, final.Status)
			counts[key]++
			switch {
			case deny && approveErr == nil && otherErr == nil, deny && approveErr != nil && otherErr != nil:
				t.Fatalf("approve∥deny: %s", key)
			case deny && approveErr == nil && final.Status != domain.StatusCompleted, deny && otherErr == nil && final.Status != domain.StatusRejected:
				t.Fatalf("approve∥deny answers do not match the end: %s", key)
			case !deny && approveErr != nil && otherErr != nil:
				t.Fatalf("approve∥cancel: both lost: %s", key)
			case !deny && otherErr == nil && final.Status != domain.StatusCancelled:
				t.Fatalf("cancel answered 200 but the run ended %s", final.Status)
			case !deny && otherErr != nil && final.Status != domain.StatusCompleted:
				t.Fatalf("approve won but the run ended %s", final.Status)
			}
		}
		t.Logf("outcomes: %v", counts)
	})
}

// TestDrainRequeues: a node stopping lets runs finish within its shutdown timeout; a run
// still before its model call then goes back to the queue (another node completes it), and
// one inside its model call fails as interrupted.
func TestDrainRequeues(t *testing.T) {
	t.Parallel()
	forEachEngineStore(t, func(t *testing.T, st *store.Store, a *domain.Agent) {
		ctx := context.Background()
		pre := &blockingRouter{entered: make(chan struct{}, 1)}
		first := New(Config{Store: SQLStore{Store: st}, Router: pre, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Workers: 2,
			LeaseTimeout: 900 * time.Millisecond, HeartbeatInterval: 150 * time.Millisecond})
		if err := first.Start(ctx); err != nil {
			t.Fatal(err)
		}
		x, _, err := first.Submit(ctx, SubmitRequest{WorkspaceID: a.WorkspaceID, Agent: a, VersionID: a.ActiveVersionID, Config: a.Config,
			Input: map[string]any{"message": "before the model"}, Source: "api", TimeoutMS: 10_000, Async: true})
		if err != nil {
			t.Fatal(err)
		}
		<-pre.entered // the run waits for its route, before any model call
		sctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		first.Stop(sctx)
		cancel()
		got, _ := st.ExecutionGet(ctx, a.WorkspaceID, x.ID)
		if got.Status != domain.StatusPending || got.OwnerNode != nil {
			t.Fatalf("drained run: %+v", got)
		}
		second := engineOn(t, st, "", nil, 2)
		waitStatus(t, st, a.WorkspaceID, x.ID, domain.StatusCompleted)
		_ = second

		m := newTestModel(0)
		m.block.Store(true)
		third := New(Config{Store: SQLStore{Store: st}, Router: testRouter{m: m}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Workers: 2,
			LeaseTimeout: 900 * time.Millisecond, HeartbeatInterval: 150 * time.Millisecond})
		if err := third.Start(ctx); err != nil {
			t.Fatal(err)
		}
		y, run, err := third.Submit(ctx, SubmitRequest{WorkspaceID: a.WorkspaceID, Agent: a, VersionID: a.ActiveVersionID, Config: a.Config,
			Input: map[string]any{"message": "inside the model"}, Source: "api", TimeoutMS: 10_000})
		if err != nil {
			t.Fatal(err)
		}
		for len(m.callsOf("inside the model")) == 0 {
			time.Sleep(time.Millisecond)
		}
		sctx, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
		third.Stop(sctx)
		cancel()
		<-run.Done()
		got, _ = st.ExecutionGet(ctx, a.WorkspaceID, y.ID)
		if got.Status != domain.StatusFailed || got.Error == nil || !strings.Contains(*got.Error, "shut down") {
			t.Fatalf("run stopped inside its model call: %+v", got)
		}
		if _, code := terminalFrame(t, st, y.ID); code != CodeInterrupted {
			t.Fatalf("code %q", code)
		}
	})
}

// TestRequeueMarksAtModelCall: a run that starts now with Requeue (an experiment's item) is
// recorded without the model-call mark, so that a rescue before its first model call queues
// it again (see TestRescuer); its pass records the mark right before that call. Without
// Requeue the row has the mark from its insert.
func TestRequeueMarksAtModelCall(t *testing.T) {
	t.Parallel()
	forEachEngineStore(t, func(t *testing.T, st *store.Store, a *domain.Agent) {
		ctx := context.Background()
		e, m := blockedEngineOn(t, st)
		submit := func(agent *domain.Agent, message string, requeue bool) (*domain.Execution, *Waiter) {
			t.Helper()
			x, run, err := e.Submit(ctx, SubmitRequest{WorkspaceID: a.WorkspaceID, Agent: agent, VersionID: a.ActiveVersionID, Config: a.Config,
				Input: map[string]any{"message": message}, Source: "experiment", TimeoutMS: 10_000, Requeue: requeue})
			if err != nil {
				t.Fatal(err)
			}
			return x, run
		}
		// A pass that stops before any model call (its agent type has no runner) leaves the
		// row as inserted.
		broken := *a
		broken.Type = "no-runner"
		for _, requeue := range []bool{true, false} {
			x, run := submit(&broken, "never calls", requeue)
			<-run.Done()
			got, err := st.ExecutionGet(ctx, a.WorkspaceID, x.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != domain.StatusFailed || got.ModelCalled == requeue {
				t.Fatalf("requeue %v: a run that never called a model ended %s with the mark %v", requeue, got.Status, got.ModelCalled)
			}
		}
		// A pass inside its model call has recorded the mark before it.
		x, run := submit(a, "inside the model", true)
		for len(m.callsOf("inside the model")) == 0 {
			time.Sleep(time.Millisecond)
		}
		got, err := st.ExecutionGet(ctx, a.WorkspaceID, x.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != domain.StatusRunning || !got.ModelCalled {
			t.Fatalf("a run inside its model call: %s, mark %v", got.Status, got.ModelCalled)
		}
		if _, err := e.Cancel(ctx, a.WorkspaceID, x.ID); err != nil {
			t.Fatal(err)
		}
		<-run.Done()
	})
}

// blockingRouter holds every run at its route (before any model call) until its context ends.
type blockingRouter struct {
	SimulatedRouter
	entered chan struct{}
}

func (r *blockingRouter) Route(ctx context.Context, _ string, _ *domain.AgentConfig, _ *domain.LLMModel) (*Route, error) {
	select {
	case r.entered <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestLeaseLostStopsRun: a run whose lease another node took over (here: it expired and was
// rescued while this node's heartbeat could not renew it) is stopped on this node at its next
// heartbeat, and writes nothing over the rescue's outcome.
func TestLeaseLostStopsRun(t *testing.T) {
	t.Parallel()
	forEachEngineStore(t, func(t *testing.T, st *store.Store, a *domain.Agent) {
		ctx := context.Background()
		e, m := blockedEngineOn(t, st)
		x, run, err := e.Submit(ctx, SubmitRequest{WorkspaceID: a.WorkspaceID, Agent: a, VersionID: a.ActiveVersionID, Config: a.Config,
			Input: map[string]any{"message": "stalled"}, Source: "api", TimeoutMS: 10_000})
		if err != nil {
			t.Fatal(err)
		}
		for len(m.callsOf("stalled")) == 0 {
			time.Sleep(time.Millisecond)
		}
		// Another node's rescue, as after a stall of this one: the run is failed there.
		other := New(Config{Store: SQLStore{Store: st}, Router: SimulatedRouter{Model: simulated.New()}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		cur, _ := st.ExecutionGet(ctx, a.WorkspaceID, x.ID)
		if err := st.InTx(ctx, func(tx *store.Store) error { return other.rescuer.fail(ctx, SQLStore{tx}, cur) }); err != nil {
			t.Fatal(err)
		}
		select {
		case <-run.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the run went on after losing its lease")
		}
		got, _ := st.ExecutionGet(ctx, a.WorkspaceID, x.ID)
		if got.Status != domain.StatusFailed || got.Error == nil || !strings.Contains(*got.Error, "stopped before it finished") {
			t.Fatalf("the rescue's outcome was overwritten: %+v", got)
		}
		evs, _ := st.EventList(ctx, x.ID, 0)
		if n := len(evs); n != 1 || evs[0].Seq != seqBlock+1 {
			t.Fatalf("frames: %+v", evs)
		}
	})
}

// TestFinishRetries: a run whose final write fails is never left running: the write is tried
// again, and when it keeps failing the run is recorded failed (terminal frame, session
// released) as soon as the database takes it.
func TestFinishRetries(t *testing.T) {
	t.Parallel()
	forEachEngineStore(t, func(t *testing.T, st *store.Store, a *domain.Agent) {
		ctx := context.Background()
		e := engineOn(t, st, "", nil, 2)
		var fails atomic.Int32
		fault := func() error {
			if fails.Add(-1) >= 0 {
				return errors.New("injected: the database went away")
			}
			return nil
		}
		e.testFault.Store(&fault)
		submit := func() *domain.Execution {
			x, run, err := e.Submit(ctx, SubmitRequest{WorkspaceID: a.WorkspaceID, Agent: a, VersionID: a.ActiveVersionID, Config: a.Config,
				Input: map[string]any{"message": "hi"}, Source: "api", TimeoutMS: 10_000})
			if err != nil {
				t.Fatal(err)
			}
			<-run.Done()
			got, _ := st.ExecutionGet(ctx, a.WorkspaceID, x.ID)
			return got
		}
		fails.Store(finishAttempts - 1) // the last try of the full write succeeds
		if x := submit(); x.Status != domain.StatusCompleted {
			t.Fatalf("after transient failures: %+v", x)
		}
		fails.Store(finishAttempts + 3) // the full write gives up; the failure record is retried
		x := submit()
		if x.Status != domain.StatusFailed || x.Error == nil || !strings.Contains(*x.Error, "could not be stored") || x.OwnerNode != nil {
			t.Fatalf("after a lasting failure: %+v", x)
		}
		if _, code := terminalFrame(t, st, x.ID); code != CodeFailed {
			t.Fatalf("code %q", code)
		}
	})
}

// TestRenewFailureStopsRuns: a node that cannot renew its leases stops its runs before they
// could expire (another node may take them over then); each ends as interrupted once the
// database takes the write.
func TestRenewFailureStopsRuns(t *testing.T) {
	t.Parallel()
	forEachEngineStore(t, func(t *testing.T, st *store.Store, a *domain.Agent) {
		ctx := context.Background()
		e, m := blockedEngineOn(t, st)
		x, run, err := e.Submit(ctx, SubmitRequest{WorkspaceID: a.WorkspaceID, Agent: a, VersionID: a.ActiveVersionID, Config: a.Config,
			Input: map[string]any{"message": "cut off"}, Source: "api", TimeoutMS: 10_000})
		if err != nil {
			t.Fatal(err)
		}
		for len(m.callsOf("cut off")) == 0 {
			time.Sleep(time.Millisecond)
		}
		var down atomic.Bool
		down.Store(true)
		fault := func() error {
			if down.Load() {
				return errors.New("injected: the database is unreachable")
			}
			return nil
		}
		e.testFault.Store(&fault)
		cut := time.Now()
		deadline := time.Now().Add(5 * time.Second)
		for {
			h := e.runs.get(x.ID)
			if h == nil || h.ctx.Err() != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the run went on although its lease could not be renewed")
			}
			time.Sleep(5 * time.Millisecond)
		}
		// It stops a heartbeat before the lease runs out; the bound here has room for a loaded
		// machine's late ticks.
		if took := time.Since(cut); took > 3*e.lease {
			t.Errorf("stopped %s after the renewals failed; the lease is %s", took, e.lease)
		}
		down.Store(false)
		<-run.Done()
		got, _ := st.ExecutionGet(ctx, a.WorkspaceID, x.ID)
		if got.Status != domain.StatusFailed || got.Error == nil || !strings.Contains(*got.Error, "lease") {
			t.Fatalf("after the lost lease: %+v", got)
		}
		if _, code := terminalFrame(t, st, x.ID); code != CodeInterrupted {
			t.Fatalf("code %q", code)
		}
	})
}
