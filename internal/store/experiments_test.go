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
			// The outcome of another execution than the item's (one it ran as before it ran
			// again) is not recorded.
			stale := o
			stale.ExecutionID = "not-the-items-execution"
			if ok, err := s.ExperimentItemFinish(ctx, x.ID, items[0].ID, domain.ItemRunning, stale, score()); err != nil || ok {
				t.Fatalf("finish with another execution: %v %v", ok, err)
			}
			running, err := s.ExperimentItemsByStatus(ctx, x.ID, domain.ItemRunning, 0)
			if err != nil || len(running) != 1 || running[0].ExecutionID == nil {
				t.Fatalf("running items: %+v %v", running, err)
			}
			o.ExecutionID = *running[0].ExecutionID
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

// TestExperimentItemRetry covers the re-run of an item whose execution was interrupted: the
// new execution replaces the interrupted one only while the item still points at it (of
// racing drivers one wins), up to domain.ItemMaxAttempts executions, and every execution
// stays listed among the experiment's.
func TestExperimentItemRetry(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "a")
		mustModel(t, s)
		a, err := s.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: "A", Type: "simple", Status: "active"}, &domain.AgentConfig{Model: "gpt-4o"}, "")
		if err != nil {
			t.Fatal(err)
		}
		newExecution := func() string {
			x := &domain.Execution{ID: NewID(), WorkspaceID: ws, AgentID: a.ID, AgentVersionID: a.ActiveVersionID, Source: "experiment",
				Status: domain.StatusPending, Input: domain.JSONObject{}, Metadata: domain.JSONObject{}, TimeoutMS: 1000}
			if err := s.ExecutionCreate(ctx, x, &domain.Trace{WorkspaceID: ws, ExecutionID: &x.ID, AgentID: &a.ID, Name: "A"}); err != nil {
				t.Fatal(err)
			}
			return x.ID
		}
		items := []*domain.DatasetItem{{ID: NewID(), Input: domain.JSONObject{}}, {ID: NewID(), Input: domain.JSONObject{}}, {ID: NewID(), Input: domain.JSONObject{}}}
		x, err := s.ExperimentCreate(ctx, &domain.Experiment{WorkspaceID: ws, DatasetID: "d", AgentID: a.ID, VersionID: "v", Concurrency: 2}, items)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.ExperimentClaim(ctx, "node", time.Minute, 10); err != nil {
			t.Fatal(err)
		}
		item := func(id string) *domain.ExperimentItem {
			t.Helper()
			its, err := s.ExperimentItems(ctx, x.ID, domain.Page{})
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range its {
				if it.ItemID == id {
					return it
				}
			}
			t.Fatalf("item %s not found", id)
			return nil
		}
		listed := func() map[string]bool {
			t.Helper()
			l, _, err := s.ExecutionList(ctx, ws, domain.ExecutionFilter{ExperimentID: x.ID}, domain.Page{Page: 1, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			ids := map[string]bool{}
			for _, e := range l {
				ids[e.ID] = true
			}
			return ids
		}

		first := newExecution()
		if err := s.ExperimentItemAttach(ctx, x.ID, items[0].ID, first); err != nil {
			t.Fatal(err)
		}
		if it := item(items[0].ID); it.Attempts != 1 || item(items[1].ID).Attempts != 0 {
			t.Fatalf("attempts after the first start: %d, pending item %d", it.Attempts, item(items[1].ID).Attempts)
		}

		t.Run("a pending item cannot be retried", func(t *testing.T) {
			if err := s.ExperimentItemRetry(ctx, x.ID, items[1].ID, first, newExecution()); !errors.Is(err, domain.ErrItemTaken) {
				t.Fatalf("retry of a pending item: %v", err)
			}
		})
		var second string
		t.Run("of racing drivers one runs it again", func(t *testing.T) {
			var wg sync.WaitGroup
			var mu sync.Mutex
			var won []string
			for range 4 {
				id := newExecution()
				wg.Go(func() {
					err := s.InTx(ctx, func(tx *Store) error { return tx.ExperimentItemRetry(ctx, x.ID, items[0].ID, first, id) })
					if err == nil {
						mu.Lock()
						won = append(won, id)
						mu.Unlock()
					} else if !errors.Is(err, domain.ErrItemTaken) {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			if len(won) != 1 {
				t.Fatalf("item run again %d times", len(won))
			}
			second = won[0]
			it := item(items[0].ID)
			if it.Attempts != 2 || *it.ExecutionID != second || it.Status != domain.ItemRunning {
				t.Fatalf("item after the retry: %+v", it)
			}
			if ids := listed(); !ids[first] || !ids[second] {
				t.Fatalf("the experiment's executions %v lack the interrupted %s or its successor %s", ids, first, second)
			}
		})
		t.Run("a rolled back retry leaves the item as it was", func(t *testing.T) {
			stop := errors.New("the execution could not be created")
			next := newExecution() // outside the transaction: SQLite has one writer
			err := s.InTx(ctx, func(tx *Store) error {
				if err := tx.ExperimentItemRetry(ctx, x.ID, items[0].ID, second, next); err != nil {
					return err
				}
				return stop
			})
			if !errors.Is(err, stop) {
				t.Fatal(err)
			}
			if it := item(items[0].ID); it.Attempts != 2 || *it.ExecutionID != second {
				t.Fatalf("item after a rolled back retry: %+v", it)
			}
		})
		t.Run("the attempts are bounded", func(t *testing.T) {
			cur := second
			for it := item(items[0].ID); it.Attempts < domain.ItemMaxAttempts; it = item(items[0].ID) {
				next := newExecution()
				if err := s.ExperimentItemRetry(ctx, x.ID, items[0].ID, cur, next); err != nil {
					t.Fatal(err)
				}
				cur = next
			}
			if err := s.ExperimentItemRetry(ctx, x.ID, items[0].ID, cur, newExecution()); !errors.Is(err, domain.ErrItemTaken) {
				t.Fatalf("retry past %d attempts: %v", domain.ItemMaxAttempts, err)
			}
			if n := len(listed()); n != domain.ItemMaxAttempts {
				t.Fatalf("%d executions listed, want %d", n, domain.ItemMaxAttempts)
			}
		})
		t.Run("a finished item is not retried", func(t *testing.T) {
			id := newExecution()
			if err := s.ExperimentItemAttach(ctx, x.ID, items[2].ID, id); err != nil {
				t.Fatal(err)
			}
			if ok, err := s.ExperimentItemFinish(ctx, x.ID, items[2].ID, domain.ItemRunning, domain.ItemOutcome{Status: domain.ItemFailed}, nil); !ok || err != nil {
				t.Fatalf("finish: %v %v", ok, err)
			}
			if err := s.ExperimentItemRetry(ctx, x.ID, items[2].ID, id, newExecution()); !errors.Is(err, domain.ErrItemTaken) {
				t.Fatalf("retry of a finished item: %v", err)
			}
		})
	})
}
