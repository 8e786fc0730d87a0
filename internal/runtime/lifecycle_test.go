package runtime

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/agentplane/agentplane/internal/store"
)

// lifecycleSpec is the execution state machine as API.md describes it, written apart from
// the code's table so that the test compares two statements of it.
var lifecycleSpec = map[string]map[store.ExecutionMove]string{
	"pending":           {"claim": "running", "cancel": "cancelled"},
	"running":           {"complete": "completed", "fail": "failed", "cancel": "cancelled", "pause": "awaiting_approval", "requeue": "pending"},
	"awaiting_approval": {"resume": "running", "reject": "rejected", "cancel": "cancelled"},
}

// pathTo is a sequence of allowed moves from pending to each status.
var pathTo = map[string][]store.ExecutionMove{
	"pending":           nil,
	"running":           {store.MoveClaim},
	"awaiting_approval": {store.MoveClaim, store.MovePause},
	"completed":         {store.MoveClaim, store.MoveComplete},
	"failed":            {store.MoveClaim, store.MoveFail},
	"cancelled":         {store.MoveCancel},
	"rejected":          {store.MoveClaim, store.MovePause, store.MoveReject},
}

// TestLifecycleTable: the code's table is the spec, move by move and status by status.
func TestLifecycleTable(t *testing.T) {
	for _, from := range store.ExecutionStatuses {
		t.Run(from, func(t *testing.T) {
			for _, m := range store.ExecutionMoves {
				want, wantOK := lifecycleSpec[from][m]
				if got, ok := store.NextStatus(from, m); got != want || ok != wantOK {
					t.Errorf("%s on %s: %q %t, want %q %t", from, m, got, ok, want, wantOK)
				}
			}
			if store.IsTerminal(from) != (lifecycleSpec[from] == nil) {
				t.Errorf("IsTerminal(%s) = %t", from, store.IsTerminal(from))
			}
		})
	}
}

// TestLifecycleWalk walks the table on a real store: every move from every status, through
// the store call the engine makes for it, is done when the table allows it and refused
// (nothing written) when it does not.
func TestLifecycleWalk(t *testing.T) {
	forEachEngineStore(t, func(t *testing.T, st *store.Store, a *store.Agent) {
		for _, from := range store.ExecutionStatuses {
			for _, m := range store.ExecutionMoves {
				t.Run(fmt.Sprintf("%s/%s", from, m), func(t *testing.T) {
					ctx := context.Background()
					x := lifecycleRow(t, st, a, from)
					defer drainPending(t, st, x)
					to, allowed := store.NextStatus(from, m)
					err := lifecycleMove(ctx, st, x, m)
					got, gerr := st.ExecutionGet(ctx, x.WorkspaceID, x.ID)
					if gerr != nil {
						t.Fatal(gerr)
					}
					switch {
					case allowed && (err != nil || got.Status != to):
						t.Fatalf("allowed move: %v, status %s, want %s", err, got.Status, to)
					case !allowed && (err == nil || got.Status != from):
						t.Fatalf("forbidden move: error %v, status %s, want a refusal and %s", err, got.Status, from)
					}
				})
			}
		}
	})
}

// errRefused is lifecycleMove's error for a move the store did not make without an error
// of its own (a claim that found nothing to claim, a requeue that matched no row).
var errRefused = errors.New("the store made no move")

// lifecycleMove makes a move through the store call the engine makes for it.
func lifecycleMove(ctx context.Context, st *store.Store, x *store.Execution, m store.ExecutionMove) error {
	switch m {
	case store.MoveClaim:
		got, err := st.ExecutionClaim(ctx, store.Claim{Node: "walk", Lease: DefaultLeaseTimeout, SeqBlock: seqBlock})
		if err == nil && (got == nil || got.ID != x.ID) {
			err = errRefused
		}
		return err
	case store.MoveRequeue:
		ok, err := st.ExecutionRequeue(ctx, x.WorkspaceID, x.ID, nil, nil)
		if err == nil && !ok {
			err = errRefused
		}
		return err
	}
	_, err := st.ExecutionTransition(ctx, x.WorkspaceID, x.ID, m.Status(), store.ExecutionPatch{From: x.Status, Move: m})
	var te *store.TransitionError
	if err != nil && !errors.As(err, &te) {
		return fmt.Errorf("not a transition error: %w", err)
	}
	return err
}

// lifecycleRow creates an execution in a status by the moves of pathTo.
func lifecycleRow(t *testing.T, st *store.Store, a *store.Agent, status string) *store.Execution {
	t.Helper()
	ctx := context.Background()
	x := &store.Execution{ID: store.NewID(), WorkspaceID: a.WorkspaceID, AgentID: a.ID, AgentVersionID: a.ActiveVersionID,
		Source: "api", Status: store.StatusPending, Input: store.JSONObject{}, Metadata: store.JSONObject{}}
	tr := &store.Trace{WorkspaceID: a.WorkspaceID, ExecutionID: &x.ID, AgentID: &a.ID, Name: a.Name, Metadata: store.JSONObject{}}
	if err := st.ExecutionCreate(ctx, x, tr); err != nil {
		t.Fatal(err)
	}
	for _, m := range pathTo[status] {
		if err := lifecycleMove(ctx, st, x, m); err != nil {
			t.Fatalf("to %s by %s: %v", status, m, err)
		}
		x.Status, _ = store.NextStatus(x.Status, m)
	}
	return x
}

// drainPending cancels x if it is left queued, so the next case's claim finds only its own.
func drainPending(t *testing.T, st *store.Store, x *store.Execution) {
	t.Helper()
	_, err := st.ExecutionTransition(context.Background(), x.WorkspaceID, x.ID, store.StatusCancelled, store.ExecutionPatch{From: store.StatusPending})
	var te *store.TransitionError
	if err != nil && !errors.As(err, &te) {
		t.Fatal(err)
	}
}
