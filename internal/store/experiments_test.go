package store

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// TestExperiments covers the guards that make an experiment run each item once and score it
// once: one node holds the lease, an item is attached to one execution, its outcome and
// scores are written once, and a cancel freezes it.
func TestExperiments(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		f := newScoreFixture(t, s) // a workspace with an execution to score
		ws := f.ws
		items := make([]*domain.DatasetItem, 150)
		for i := range items {
			items[i] = &domain.DatasetItem{ID: NewID(), Input: domain.JSONObject{"n": i}}
		}
		x, err := s.ExperimentCreate(ctx, &domain.Experiment{WorkspaceID: ws, Name: "e", DatasetID: "d", DatasetVersion: 3, AgentID: "a", VersionID: "v",
			EvaluatorIDs: domain.Strings{"ev"}, Concurrency: 4}, items)
		if err != nil {
			t.Fatal(err)
		}

		t.Run("created pending with its items in order", func(t *testing.T) {
			if x.Status != domain.ExperimentPending || x.Progress.Total != 150 || x.OwnerNode != nil {
				t.Fatalf("new experiment: %+v", x)
			}
			its, err := s.ExperimentItems(ctx, x.ID, domain.Page{Page: 2, Limit: 100})
			if err != nil || len(its) != 50 || its[0].Position != 100 || its[0].Status != domain.ItemPending || its[0].Input["n"] != float64(100) {
				t.Fatalf("items page 2: %d %v", len(its), err)
			}
		})
		t.Run("one node at a time holds the lease", func(t *testing.T) {
			var wg sync.WaitGroup
			won := make([]int, 4)
			for i := range won {
				wg.Go(func() {
					xs, err := s.ExperimentClaim(ctx, string(rune('a'+i)), time.Minute, 10)
					if err != nil {
						t.Error(err)
					}
					won[i] = len(xs)
				})
			}
			wg.Wait()
			if won[0]+won[1]+won[2]+won[3] != 1 {
				t.Fatalf("claims won: %v", won)
			}
			if ok, _ := s.ExperimentRenew(ctx, x.ID, "nobody", time.Minute); ok {
				t.Fatal("a node without the lease renewed it")
			}
		})
		t.Run("an item is attached once", func(t *testing.T) {
			var wg sync.WaitGroup
			var mu sync.Mutex
			attached := 0
			for range 4 {
				wg.Go(func() {
					err := s.ExperimentItemAttach(ctx, x.ID, items[0].ID, NewID())
					if err == nil {
						mu.Lock()
						attached++
						mu.Unlock()
					} else if !errors.Is(err, domain.ErrItemTaken) {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			if attached != 1 {
				t.Fatalf("item attached %d times", attached)
			}
		})
		t.Run("an outcome and its scores are written once", func(t *testing.T) {
			one := 1.0
			o := domain.ItemOutcome{Status: domain.ItemCompleted, Scores: domain.JSONObject{"q": 1.0}, Cost: 0.5, TotalTokens: 10}
			score := func() []*domain.Score {
				return []*domain.Score{{WorkspaceID: ws, Name: "q", DataType: domain.ScoreNumeric, Value: &one, Source: domain.ScoreSourceEval, ExecutionID: &f.exec}}
			}
			first, err := s.ExperimentItemFinish(ctx, x.ID, items[0].ID, domain.ItemRunning, o, score())
			if err != nil || !first {
				t.Fatalf("first finish: %v %v", first, err)
			}
			again, err := s.ExperimentItemFinish(ctx, x.ID, items[0].ID, domain.ItemRunning, o, score())
			if err != nil || again {
				t.Fatalf("second finish: %v %v", again, err)
			}
			if _, total, _ := s.ScoreList(ctx, ws, domain.ScoreFilter{Source: domain.ScoreSourceEval}, domain.Page{Page: 1, Limit: 10}); total != 1 {
				t.Fatalf("%d scores", total)
			}
			done, err := s.ExperimentItemsDone(ctx, x.ID, 0, 10)
			if err != nil || len(done) != 1 || *done[0].DoneSeq != 1 {
				t.Fatalf("finished items: %+v %v", done, err)
			}
		})
		t.Run("an item is read by its id", func(t *testing.T) {
			it, err := s.ExperimentItemGet(ctx, x.ID, items[0].ID)
			if err != nil || it.Status != domain.ItemCompleted || it.Position != 0 || *it.DoneSeq != 1 {
				t.Fatalf("item: %+v %v", it, err)
			}
			if _, err := s.ExperimentItemGet(ctx, x.ID, "nope"); !IsNotFound(err) {
				t.Fatalf("missing item: %v", err)
			}
		})
		t.Run("a finish inside a caller's transaction writes nothing for an item finished already", func(t *testing.T) {
			// The run's end records items in its own transaction (experiment.Runner): an item
			// finished meanwhile must leave the count as it was and the transaction usable.
			before, err := s.ExperimentGet(ctx, ws, x.ID)
			if err != nil {
				t.Fatal(err)
			}
			err = s.InTx(ctx, func(tx *Store) error {
				ok, err := tx.ExperimentItemFinish(ctx, x.ID, items[0].ID, domain.ItemRunning, domain.ItemOutcome{Status: domain.ItemFailed}, nil)
				if err != nil || ok {
					t.Errorf("finish of a finished item: %v %v", ok, err)
				}
				if err := tx.ExperimentItemAttach(ctx, x.ID, items[3].ID, NewID()); err != nil {
					return err
				}
				ok, err = tx.ExperimentItemFinish(ctx, x.ID, items[3].ID, domain.ItemRunning, domain.ItemOutcome{Status: domain.ItemFailed}, nil)
				if err != nil || !ok {
					t.Errorf("finish of a running item: %v %v", ok, err)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			after, err := s.ExperimentGet(ctx, ws, x.ID)
			if err != nil || after.Progress.Completed != before.Progress.Completed || after.Progress.Failed != before.Progress.Failed+1 {
				t.Fatalf("progress %+v, then %+v (%v)", before.Progress, after.Progress, err)
			}
			done, err := s.ExperimentItemsDone(ctx, x.ID, 1, 10)
			if err != nil || len(done) != 1 || done[0].ItemID != items[3].ID || *done[0].DoneSeq != 2 {
				t.Fatalf("finished items after the first: %+v %v", done, err)
			}
		})
		t.Run("a cancel freezes it", func(t *testing.T) {
			if err := s.ExperimentItemAttach(ctx, x.ID, items[1].ID, "exec-1"); err != nil {
				t.Fatal(err)
			}
			c, running, err := s.ExperimentCancel(ctx, ws, x.ID)
			if err != nil || c.Status != domain.ExperimentCancelled || len(running) != 1 || running[0] != "exec-1" {
				t.Fatalf("cancel: %+v %v %v", c, running, err)
			}
			if err := s.ExperimentItemAttach(ctx, x.ID, items[2].ID, NewID()); !errors.Is(err, domain.ErrItemTaken) {
				t.Fatalf("attach after cancel: %v", err)
			}
			if ok, _ := s.ExperimentItemFinish(ctx, x.ID, items[1].ID, domain.ItemRunning, domain.ItemOutcome{Status: domain.ItemFailed}, nil); ok {
				t.Fatal("an item of a cancelled experiment was finished")
			}
			if _, _, err := s.ExperimentCancel(ctx, ws, x.ID); err == nil {
				t.Fatal("cancelled twice")
			}
			if _, err := s.ExperimentGet(ctx, f.other, x.ID); !IsNotFound(err) {
				t.Fatalf("another workspace's experiment: %v", err)
			}
		})
	})
}
