package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// TestExecutionWritePath: the statements a run writes with. ExecutionCreate records the
// execution and its trace (one statement on PostgreSQL) with the claim's model-called mark;
// ExecutionTransition with a Trace ends the trace with the move, and not at all when the move
// is fenced.
func TestExecutionWritePath(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "a")
		create := func(t *testing.T, called bool) *domain.Execution {
			t.Helper()
			c := domain.Claim{Node: "node-a", Lease: time.Minute, SeqBlock: 64, ModelCalled: called}
			x := &domain.Execution{WorkspaceID: ws, AgentID: "ag1", Source: "api", Status: domain.StatusRunning, Input: domain.JSONObject{"q": "hi"},
				Metadata: domain.JSONObject{"k": "v"}, TimeoutMS: 1000, Claim: &c}
			agent := "ag1"
			if err := s.ExecutionCreate(ctx, x, &domain.Trace{WorkspaceID: ws, AgentID: &agent, Name: "A"}); err != nil {
				t.Fatal(err)
			}
			return x
		}

		t.Run("CreateWithTrace", func(t *testing.T) {
			for _, called := range []bool{false, true} {
				x := create(t, called)
				got, err := s.ExecutionGet(ctx, ws, x.ID)
				if err != nil || got.ModelCalled != called || got.Attempt != 1 || got.SeqReserved != 64 || *got.OwnerNode != "node-a" ||
					got.Input["q"] != "hi" || got.Metadata["k"] != "v" || got.TraceID != x.TraceID || got.LeaseExpiresAt == nil {
					t.Fatalf("execution (called %t): %+v %v", called, got, err)
				}
				tr, err := s.TraceGet(ctx, ws, x.TraceID)
				if err != nil || tr.ExecutionID == nil || *tr.ExecutionID != x.ID || tr.Status != domain.StatusRunning || *tr.AgentID != "ag1" {
					t.Fatalf("trace: %+v %v", tr, err)
				}
			}
		})

		t.Run("TransitionEndsTrace", func(t *testing.T) {
			x := create(t, true)
			end := domain.TraceEnd{Usage: domain.TokenUsage{PromptTokens: 3, CompletionTokens: 4}, Cost: 0.5, EndedAt: domain.Now(), DurationMS: 42}
			_, err := s.ExecutionTransition(ctx, ws, x.ID, domain.StatusCompleted, domain.ExecutionPatch{Owner: &domain.Owner{Node: "node-b", Attempt: 1}, Trace: &end})
			var te *TransitionError
			if !errors.As(err, &te) || !te.Fenced {
				t.Fatalf("fenced move: %v", err)
			}
			if tr, _ := s.TraceGet(ctx, ws, x.TraceID); tr.Status != domain.StatusRunning || tr.EndedAt != nil || tr.Cost != 0 {
				t.Fatalf("a fenced move ended the trace: %+v", tr)
			}
			done, err := s.ExecutionTransition(ctx, ws, x.ID, domain.StatusCompleted, domain.ExecutionPatch{Owner: &domain.Owner{Node: "node-a", Attempt: 1},
				Output: []byte(`{"content":"ok"}`), Trace: &end})
			if err != nil || done.Status != domain.StatusCompleted || string(done.Output) != `{"content":"ok"}` || done.TraceID != x.TraceID {
				t.Fatalf("move: %+v %v", done, err)
			}
			tr, err := s.TraceGet(ctx, ws, x.TraceID)
			if err != nil || tr.Status != domain.StatusCompleted || tr.TokenUsage.TotalTokens != 7 || tr.Cost != 0.5 || *tr.DurationMS != 42 ||
				tr.EndedAt == nil || tr.EndedAt.UnixMilli() != end.EndedAt.UnixMilli() {
				t.Fatalf("trace: %+v %v", tr, err)
			}
		})
	})
}
