package store

import (
	"context"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// TestAnnotationQueueStore: claims expire and pass to the next reviewer, an item goes with its
// execution, and a deleted workspace's purge empties the queues, on both dialects.
func TestAnnotationQueueStore(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws, xs := leaseFixture(t, s, 2)
		cfg, err := s.ScoreConfigCreate(ctx, &domain.ScoreConfig{WorkspaceID: ws, Name: "ok", DataType: domain.ScoreBoolean})
		if err != nil {
			t.Fatal(err)
		}
		q, err := s.AnnotationQueueCreate(ctx, &domain.AnnotationQueue{WorkspaceID: ws, Name: "q", ScoreConfigIDs: domain.Strings{cfg.ID}})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.AnnotationItemsAdd(ctx, ws, q.ID, []string{xs[0].ID, xs[1].ID}); err != nil {
			t.Fatal(err)
		}
		alice, bob := domain.Reviewer{ID: "user:a", Name: "a@x"}, domain.Reviewer{ID: "user:b", Name: "b@x"}
		// Alice's claim has run out at once: bob gets her item, the oldest.
		a, err := s.AnnotationNext(ctx, ws, q.ID, alice, -time.Second)
		if err != nil || a == nil || a.ExecutionID != xs[0].ID || a.ClaimedBy != nil {
			t.Fatalf("alice's expired claim: %+v %v", a, err)
		}
		b, err := s.AnnotationNext(ctx, ws, q.ID, bob, time.Minute)
		if err != nil || b == nil || b.ID != a.ID || *b.ClaimedBy != bob.ID {
			t.Fatalf("bob's claim: %+v %v", b, err)
		}
		if _, _, err := s.AnnotationComplete(ctx, ws, q.ID, a.ID, alice, nil, []*domain.Score{{ConfigID: &cfg.ID, StringValue: domain.PtrTo("true")}}); err == nil {
			t.Fatal("alice completed bob's claim")
		}
		// The execution's deletion takes its item along.
		if _, err := s.exec(ctx, "DELETE FROM executions WHERE id = $1", xs[1].ID); err != nil {
			t.Fatal(err)
		}
		if got, err := s.AnnotationQueueGet(ctx, ws, q.ID); err != nil || got.Pending != 1 {
			t.Fatalf("after the execution's deletion: %+v %v", got, err)
		}
		if _, err := s.WorkspaceDelete(ctx, ws); err != nil {
			t.Fatal(err)
		}
		for done := false; !done; {
			if _, done, err = s.WorkspacePurge(ctx, ws, 100); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := s.count(ctx, "SELECT count(*) FROM annotation_queues", nil); err != nil || n != 0 {
			t.Fatalf("queues left after the purge: %d %v", n, err)
		}
	})
}
