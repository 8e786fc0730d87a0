package runtime

import (
	"context"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// TestSyncRunMarkedAtInsert: a sync run's row is inserted with the model-called mark (its
// pass sends no statement for it: a stop of its node fails it where its caller waits instead
// of queueing it for another node); an async run's is not, until a pass reaches a call.
func TestSyncRunMarkedAtInsert(t *testing.T) {
	t.Parallel()
	forEachEngineStore(t, func(t *testing.T, st *store.Store, a *domain.Agent) {
		ctx := context.Background()
		e := engineOn(t, st, "", nil, 2)
		for _, async := range []bool{false, true} {
			x, run, err := e.Submit(ctx, SubmitRequest{WorkspaceID: a.WorkspaceID, Agent: a, VersionID: a.ActiveVersionID, Config: a.Config,
				Input: map[string]any{"message": "hello"}, Source: "api", TimeoutMS: 10_000, Async: async})
			if err != nil {
				t.Fatal(err)
			}
			if x.ModelCalled == async {
				t.Fatalf("async %t: inserted with model_called %t", async, x.ModelCalled)
			}
			if run != nil {
				<-run.Done()
			}
			if got := waitStatus(t, st, a.WorkspaceID, x.ID, domain.StatusCompleted); !got.ModelCalled {
				t.Fatalf("async %t: completed without the mark: %+v", async, got)
			}
		}
	})
}
