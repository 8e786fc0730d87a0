package store

import (
	"context"
	"sync"
	"testing"
)

// TestAnnotationClaims has reviewers race for a queue's items: each item goes to one reviewer,
// and a claim that ran out can be taken again.
func TestAnnotationClaims(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws, xs := leaseFixture(t, s, 6)
		cfg, err := s.ScoreConfigCreate(ctx, &ScoreConfig{WorkspaceID: ws, Name: "ok", DataType: ScoreBoolean})
		if err != nil {
			t.Fatal(err)
		}
		q, err := s.AnnotationQueueCreate(ctx, &AnnotationQueue{WorkspaceID: ws, Name: "q", ScoreConfigIDs: Strings{cfg.ID}})
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]string, len(xs))
		for i, x := range xs {
			ids[i] = x.ID
		}
		if added, err := s.AnnotationItemsAdd(ctx, ws, q.ID, ids); err != nil || len(added) != 6 {
			t.Fatalf("add: %d %v", len(added), err)
		}
		var mu sync.Mutex
		got := map[string]string{}
		var wg sync.WaitGroup
		for r := range 4 {
			wg.Go(func() {
				for {
					it, err := s.AnnotationItemClaim(ctx, ws, q.ID, string(rune('a'+r)), 60_000)
					if err != nil {
						t.Error(err)
						return
					}
					if it == nil {
						return
					}
					mu.Lock()
					if prev, ok := got[it.ID]; ok {
						t.Errorf("item %s claimed by %s and %s", it.ID, prev, *it.ClaimedBy)
					}
					got[it.ID] = *it.ClaimedBy
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(got) != 6 {
			t.Fatalf("%d items claimed, want 6", len(got))
		}

		// A claim that ran out is pending again and goes to the next reviewer.
		late, err := s.AnnotationItemsAdd(ctx, ws, q.ID, []string{xs[0].ID})
		if err != nil || len(late) != 0 {
			t.Fatalf("re-adding: %v %v", late, err)
		}
		if _, err := s.exec(ctx, "UPDATE annotation_items SET claim_expires_at = 1 WHERE queue_id = $1 AND execution_id = $2", q.ID, xs[0].ID); err != nil {
			t.Fatal(err)
		}
		it, err := s.AnnotationItemClaim(ctx, ws, q.ID, "z", 60_000)
		if err != nil || it == nil || it.ExecutionID != xs[0].ID || *it.ClaimedBy != "z" {
			t.Fatalf("expired claim: %+v %v", it, err)
		}
		one := 1.0
		if _, _, err := s.AnnotationItemComplete(ctx, ws, q.ID, it.ID, "a", []*Score{{ConfigID: &cfg.ID, Value: &one}}); err == nil {
			t.Fatal("a reviewer completed an item claimed by another")
		}
		done, scores, err := s.AnnotationItemComplete(ctx, ws, q.ID, it.ID, "z", []*Score{{ConfigID: &cfg.ID, Value: &one}})
		if err != nil || done.Status != AnnotationCompleted || len(scores) != 1 || scores[0].Source != ScoreSourceAnnotation {
			t.Fatalf("complete: %+v %v %v", done, scores, err)
		}
	})
}
