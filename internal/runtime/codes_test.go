package runtime

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// terminalFrame returns the data of an execution's stored terminal error frame.
func terminalFrame(t *testing.T, st *store.Store, id string) (message, code string) {
	t.Helper()
	evs, err := st.EventList(context.Background(), id, 0)
	if err != nil || len(evs) == 0 {
		t.Fatalf("frames of %s: %v %v", id, evs, err)
	}
	last := evs[len(evs)-1]
	if last.Event != "error" {
		t.Fatalf("last frame of %s is %q: %s", id, last.Event, last.Data)
	}
	var d struct{ Message, Code string }
	if err := json.Unmarshal(last.Data, &d); err != nil || d.Message == "" {
		t.Fatalf("error frame %s: %v", last.Data, err)
	}
	return d.Message, d.Code
}

// submitWith starts a run of a with cfg and waits for it to stop.
func submitWith(t *testing.T, e *Engine, a *domain.Agent, cfg *domain.AgentConfig, async bool) *domain.Execution {
	t.Helper()
	x, run, err := e.Submit(context.Background(), SubmitRequest{WorkspaceID: a.WorkspaceID, Agent: a, Config: cfg,
		Input: map[string]any{"message": "hello there"}, Source: "api", TimeoutMS: 10_000, Async: async})
	if err != nil {
		t.Fatal(err)
	}
	if run != nil {
		<-run.Done()
	}
	return x
}

// TestTerminalErrorCodes: every way a run ends without output leaves an error frame whose
// code says which: failed, timeout, cancelled, rejected, interrupted.
func TestTerminalErrorCodes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, a := fixture(t)
	e := newEngine(st)
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer stop(e)
	wait := func(id string, status string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			x, _ := st.ExecutionGet(ctx, a.WorkspaceID, id)
			if x.Status == status {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("execution %s is %s, want %s", id, x.Status, status)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	check := func(name, id, want string) {
		t.Helper()
		if _, code := terminalFrame(t, st, id); code != want {
			t.Errorf("%s: code %q, want %q", name, code, want)
		}
	}

	x := submitWith(t, e, a, &domain.AgentConfig{Model: "gpt-4o-mini", Simulation: &domain.Simulation{Fail: &domain.SimFail{All: true}}}, false)
	check("failed", x.ID, CodeFailed)

	x = submitWith(t, e, a, &domain.AgentConfig{Model: "gpt-4o-mini", RequestTimeoutMS: 20, Simulation: &domain.Simulation{LatencyMS: 200}}, false)
	check("timeout", x.ID, CodeTimeout)
	if msg, _ := terminalFrame(t, st, x.ID); msg == "" {
		t.Error("timeout without a message")
	}

	slow := &domain.AgentConfig{Model: "gpt-4o-mini", Simulation: &domain.Simulation{LatencyMS: 200}}
	x, _, err := e.Submit(ctx, SubmitRequest{WorkspaceID: a.WorkspaceID, Agent: a, Config: slow, Input: map[string]any{"message": "slow"}, Source: "api", TimeoutMS: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Cancel(ctx, a.WorkspaceID, x.ID); err != nil {
		t.Fatal(err)
	}
	check("cancelled running", x.ID, CodeCancelled)

	gate := &domain.AgentConfig{Model: "gpt-4o-mini", Approval: &domain.ApprovalConfig{Checkpoints: []domain.Checkpoint{{Name: "review", When: "before_output"}}}}
	x = submitWith(t, e, a, gate, false)
	wait(x.ID, domain.StatusAwaitingApproval)
	if _, err := e.Deny(ctx, a.WorkspaceID, x.ID, "no", ""); err != nil {
		t.Fatal(err)
	}
	check("rejected", x.ID, CodeRejected)

	x = submitWith(t, e, a, gate, false)
	wait(x.ID, domain.StatusAwaitingApproval)
	if _, err := e.Cancel(ctx, a.WorkspaceID, x.ID); err != nil {
		t.Fatal(err)
	}
	check("cancelled awaiting", x.ID, CodeCancelled)
}

// TestInterruptedCodes: a run cut off by a shutdown after its model call started, and one a
// dead process left running after its model call started (failed once its lease expired),
// end with code interrupted.
func TestInterruptedCodes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, a := fixture(t)
	e := newEngine(st)
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	slow := &domain.AgentConfig{Model: "gpt-4o-mini", Simulation: &domain.Simulation{LatencyMS: 500}}
	x, run, err := e.Submit(ctx, SubmitRequest{WorkspaceID: a.WorkspaceID, Agent: a, Config: slow, Input: map[string]any{"message": "cut"}, Source: "api", TimeoutMS: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	e.Stop(sctx)
	cancel()
	<-run.Done()
	if _, code := terminalFrame(t, st, x.ID); code != CodeInterrupted {
		t.Errorf("shutdown: code %q", code)
	}

	// A run whose node died after it reached a model call: failed when its lease expired.
	orphan := ownedRun(t, st, a, "gone-node", time.Millisecond, true, "")
	time.Sleep(5 * time.Millisecond)
	next := newEngine(st)
	if err := next.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer stop(next)
	if _, code := terminalFrame(t, st, orphan.ID); code != CodeInterrupted {
		t.Errorf("recovered: code %q", code)
	}
}

// TestSubscriptionEndedBy: a live run whose terminal frame is out reads as ended for a stream
// resumed at or past it, before the run is gone from the hub.
func TestSubscriptionEndedBy(t *testing.T) {
	t.Parallel()
	h := newHub()
	tp := h.open("w", "x", 0)
	tp.publish(domain.Event{Seq: 1, Event: "content", Data: json.RawMessage(`{"content":"a"}`)})
	sub, ok := h.Subscribe("x")
	if !ok {
		t.Fatal("not live")
	}
	defer sub.Close()
	if sub.EndedBy(1) || sub.EndedBy(5) {
		t.Fatal("ended before its terminal frame")
	}
	tp.publish(domain.Event{Seq: 2, Event: "error", Data: errorFrame("boom", CodeFailed)})
	if sub.EndedBy(1) || !sub.EndedBy(2) || !sub.EndedBy(3) {
		t.Fatal("EndedBy wrong around the terminal frame")
	}
}
