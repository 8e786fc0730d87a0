package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// The terminal hook runs in the transaction of the status change: what it writes commits
// with the change, and its failure undoes the change. Non-terminal moves do not run it.
func TestTerminalHookSharesTheTransaction(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "hooks")
		a, err := s.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: "A", Type: "simple", Status: "active"}, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		newExec := func() *domain.Execution {
			x := &domain.Execution{WorkspaceID: ws, AgentID: a.ID, Source: "api", Status: domain.StatusPending, Input: domain.JSONObject{}, Metadata: domain.JSONObject{}}
			if err := s.ExecutionCreate(ctx, x, &domain.Trace{WorkspaceID: ws, Name: "A"}); err != nil {
				t.Fatal(err)
			}
			return x
		}
		var calls []string
		boom := errors.New("boom")
		fail := true
		s.SetTerminalHook(func(ctx context.Context, tx *Store, x *domain.Execution) error {
			calls = append(calls, x.Status)
			if err := tx.WebhookDeliveryCreate(ctx, &domain.WebhookDelivery{ID: NewID(), WorkspaceID: ws, ExecutionID: x.ID, TargetType: "agent",
				TargetID: a.ID, URL: "https://example.com", EventType: "execution." + x.Status, Payload: []byte(`{}`), Secret: "sealed"}); err != nil {
				return err
			}
			if fail {
				return boom
			}
			return nil
		})
		defer s.SetTerminalHook(nil)
		x := newExec()
		if _, err := s.ExecutionTransition(ctx, ws, x.ID, domain.StatusRunning, domain.ExecutionPatch{}); err != nil || len(calls) != 0 {
			t.Fatalf("running: %v, hook calls %v", err, calls)
		}
		if _, err := s.ExecutionTransition(ctx, ws, x.ID, domain.StatusCompleted, domain.ExecutionPatch{}); !errors.Is(err, boom) {
			t.Fatalf("completed with a failing hook: %v", err)
		}
		got, _ := s.ExecutionGet(ctx, ws, x.ID)
		_, n, _ := s.WebhookDeliveryList(ctx, ws, domain.WebhookDeliveryFilter{ExecutionID: x.ID}, domain.Page{Page: 1, Limit: 10})
		if got.Status != domain.StatusRunning || n != 0 {
			t.Fatalf("after the hook failed: status %s, %d deliveries (want running, 0)", got.Status, n)
		}
		fail = false
		if _, err := s.ExecutionTransition(ctx, ws, x.ID, domain.StatusFailed, domain.ExecutionPatch{}); err != nil {
			t.Fatal(err)
		}
		_, n, _ = s.WebhookDeliveryList(ctx, ws, domain.WebhookDeliveryFilter{ExecutionID: x.ID, Status: domain.DeliveryPending}, domain.Page{Page: 1, Limit: 10})
		if n != 1 || len(calls) != 2 || calls[1] != domain.StatusFailed {
			t.Fatalf("%d deliveries, hook calls %v", n, calls)
		}
		// A refused move (already terminal) does not run it.
		if _, err := s.ExecutionTransition(ctx, ws, x.ID, domain.StatusCancelled, domain.ExecutionPatch{}); err == nil || len(calls) != 2 {
			t.Fatalf("cancel of a failed execution: %v, calls %v", err, calls)
		}
	})
}

// A delivery's attempt is recorded only by the node and attempt that claimed it.
func TestWebhookDeliveryRecordIsFenced(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "fence")
		d := &domain.WebhookDelivery{ID: NewID(), WorkspaceID: ws, ExecutionID: "x", TargetType: "agent", TargetID: "a", URL: "https://example.com",
			EventType: "execution.completed", Payload: []byte(`{"a":1}`), Secret: "sealed"}
		if err := s.WebhookDeliveryCreate(ctx, d); err != nil {
			t.Fatal(err)
		}
		now := domain.Now().Time.Add(time.Second)
		got, err := s.WebhookDeliveryClaim(ctx, "n1", now, time.Minute, 10)
		if err != nil || len(got) != 1 || got[0].Attempts != 1 || got[0].Secret != "sealed" || string(got[0].Payload) != `{"a":1}` {
			t.Fatalf("claim: %+v %v", got, err)
		}
		// Leased: nobody else takes it, even when due.
		if again, err := s.WebhookDeliveryClaim(ctx, "n2", now, time.Minute, 10); err != nil || len(again) != 0 {
			t.Fatalf("claimed twice: %d %v", len(again), err)
		}
		res := domain.WebhookAttempt{At: now, ResponseCode: 500, Error: "receiver answered 500", Status: domain.DeliveryPending, Next: now.Add(5 * time.Second)}
		if ok, err := s.WebhookDeliveryRecord(ctx, d.ID, "n2", 1, res); ok || err != nil {
			t.Fatalf("another node recorded the attempt: %v %v", ok, err)
		}
		if ok, err := s.WebhookDeliveryRecord(ctx, d.ID, "n1", 2, res); ok || err != nil {
			t.Fatalf("another attempt number recorded: %v %v", ok, err)
		}
		if ok, err := s.WebhookDeliveryRecord(ctx, d.ID, "n1", 1, res); !ok || err != nil {
			t.Fatalf("the owner could not record: %v %v", ok, err)
		}
		if due, _ := s.WebhookDeliveryClaim(ctx, "n2", now.Add(4*time.Second), time.Minute, 10); len(due) != 0 {
			t.Fatal("claimed before next_attempt_at")
		}
		due, err := s.WebhookDeliveryClaim(ctx, "n2", now.Add(5*time.Second), time.Minute, 10)
		if err != nil || len(due) != 1 || due[0].Attempts != 2 || due[0].LastResponseCode == nil || *due[0].LastResponseCode != 500 {
			t.Fatalf("second claim: %+v %v", due, err)
		}
	})
}
