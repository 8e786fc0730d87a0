package runtime

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// lifecycleSpec is the execution state machine as API.md describes it, written apart from
// the code's table so that the test compares two statements of it.
var lifecycleSpec = map[string]map[domain.ExecutionMove]string{
	"pending":           {"claim": "running", "cancel": "cancelled"},
	"running":           {"complete": "completed", "fail": "failed", "cancel": "cancelled", "pause": "awaiting_approval", "requeue": "pending"},
	"awaiting_approval": {"resume": "running", "reject": "rejected", "cancel": "cancelled"},
}

// pathTo is a sequence of allowed moves from pending to each status.
var pathTo = map[string][]domain.ExecutionMove{
	"pending":           nil,
	"running":           {domain.MoveClaim},
	"awaiting_approval": {domain.MoveClaim, domain.MovePause},
	"completed":         {domain.MoveClaim, domain.MoveComplete},
	"failed":            {domain.MoveClaim, domain.MoveFail},
	"cancelled":         {domain.MoveCancel},
	"rejected":          {domain.MoveClaim, domain.MovePause, domain.MoveReject},
}

// TestLifecycleTable: the code's table is the spec, move by move and status by status.
func TestLifecycleTable(t *testing.T) {
	t.Parallel()
	for _, from := range domain.ExecutionStatuses {
		t.Run(from, func(t *testing.T) {
			for _, m := range domain.ExecutionMoves {
				want, wantOK := lifecycleSpec[from][m]
				if got, ok := domain.NextStatus(from, m); got != want || ok != wantOK {
					t.Errorf("%s on %s: %q %t, want %q %t", from, m, got, ok, want, wantOK)
				}
			}
			if domain.IsTerminal(from) != (lifecycleSpec[from] == nil) {
				t.Errorf("IsTerminal(%s) = %t", from, domain.IsTerminal(from))
			}
		})
	}
}

// TestLifecycleWalk walks the table on a real store: every move from every status, through
// the store call the engine makes for it, is done when the table allows it and refused
// (nothing written) when it does not.
func TestLifecycleWalk(t *testing.T) {
	t.Parallel()
	forEachEngineStore(t, func(t *testing.T, st *store.Store, a *domain.Agent) {
		for _, from := range domain.ExecutionStatuses {
			for _, m := range domain.ExecutionMoves {
				t.Run(fmt.Sprintf("%s/%s", from, m), func(t *testing.T) {
					ctx := context.Background()
					x := lifecycleRow(t, st, a, from)
					defer drainPending(t, st, x)
					to, allowed := domain.NextStatus(from, m)
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
func lifecycleMove(ctx context.Context, st *store.Store, x *domain.Execution, m domain.ExecutionMove) error {
	switch m {
	case domain.MoveClaim:
		got, err := st.ExecutionClaim(ctx, domain.Claim{Node: "walk", Lease: DefaultLeaseTimeout, SeqBlock: seqBlock})
		if err == nil && (got == nil || got.ID != x.ID) {
			err = errRefused
		}
		return err
	case domain.MoveRequeue:
		ok, err := st.ExecutionRequeue(ctx, x.WorkspaceID, x.ID, nil, nil)
		if err == nil && !ok {
			err = errRefused
		}
		return err
	}
	_, err := st.ExecutionTransition(ctx, x.WorkspaceID, x.ID, m.Status(), domain.ExecutionPatch{From: x.Status, Move: m})
	var te *store.TransitionError
	if err != nil && !errors.As(err, &te) {
		return fmt.Errorf("not a transition error: %w", err)
	}
	return err
}

// lifecycleRow creates an execution in a status by the moves of pathTo.
func lifecycleRow(t *testing.T, st *store.Store, a *domain.Agent, status string) *domain.Execution {
	t.Helper()
	ctx := context.Background()
	x := &domain.Execution{ID: store.NewID(), WorkspaceID: a.WorkspaceID, AgentID: a.ID, AgentVersionID: a.ActiveVersionID,
		Source: "api", Status: domain.StatusPending, Input: domain.JSONObject{}, Metadata: domain.JSONObject{}}
	tr := &domain.Trace{WorkspaceID: a.WorkspaceID, ExecutionID: &x.ID, AgentID: &a.ID, Name: a.Name, Metadata: domain.JSONObject{}}
	if err := st.ExecutionCreate(ctx, x, tr); err != nil {
		t.Fatal(err)
	}
	for _, m := range pathTo[status] {
		if err := lifecycleMove(ctx, st, x, m); err != nil {
			t.Fatalf("to %s by %s: %v", status, m, err)
		}
		x.Status, _ = domain.NextStatus(x.Status, m)
	}
	return x
}

// drainPending cancels x if it is left queued, so the next case's claim finds only its own.
func drainPending(t *testing.T, st *store.Store, x *domain.Execution) {
	t.Helper()
	_, err := st.ExecutionTransition(context.Background(), x.WorkspaceID, x.ID, domain.StatusCancelled, domain.ExecutionPatch{From: domain.StatusPending})
	var te *store.TransitionError
	if err != nil && !errors.As(err, &te) {
		t.Fatal(err)
	}
}
