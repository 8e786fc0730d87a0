package experiment

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentplane/agentplane/internal/dbtest"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/store/storetest"
)

// dbs are the migrated databases the tests copy: a SQLite file, and a PostgreSQL database
// with TEST_DATABASE_URL.
var dbs = storetest.NewTemplate()

func TestMain(m *testing.M) {
	storetest.Main(m, dbs, goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"))
}

func forEachStore(t *testing.T, fn func(t *testing.T, st *store.Store)) {
	open := func(t *testing.T, url string) {
		st, err := store.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		fn(t, st)
	}
	t.Run("sqlite", func(t *testing.T) { open(t, dbs.SQLiteFile(t)) })
	t.Run("postgres", func(t *testing.T) {
		u := dbs.URL(t)
		if u == "" {
			t.Skip(dbtest.SkipMessage)
		}
		open(t, u)
	})
}

// TestInterrupted: an item runs again only when its execution failed as interrupted, read
// from the code of its terminal error frame; a run that failed otherwise (the model's error,
// a timeout), was cancelled, completed, or whose frame has no code (older versions) is the
// item's outcome.
func TestInterrupted(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		w, err := st.WorkspaceCreate(ctx, &domain.Workspace{Name: "W", Slug: "w"})
		if err != nil {
			t.Fatal(err)
		}
		a, err := st.AgentCreate(ctx, &domain.Agent{WorkspaceID: w.ID, Name: "A", Type: "simple", Status: "active"}, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		d := &drive{r: &Runner{cfg: Config{Store: st, Logger: slog.New(slog.DiscardHandler)}}}
		for _, c := range []struct {
			name, status, event string
			data                any
			want                bool
		}{
			{"interrupted", domain.StatusFailed, "error", map[string]string{"message": "the server stopped", "code": runtime.CodeInterrupted}, true},
			{"failed", domain.StatusFailed, "error", map[string]string{"message": "the model said no", "code": runtime.CodeFailed}, false},
			{"timed out", domain.StatusFailed, "error", map[string]string{"message": "too slow", "code": runtime.CodeTimeout}, false},
			{"cancelled", domain.StatusCancelled, "error", map[string]string{"message": "cancelled", "code": runtime.CodeInterrupted}, false},
			{"without a code", domain.StatusFailed, "error", map[string]string{"message": "the server running this execution stopped"}, false},
			{"completed", domain.StatusCompleted, "done", map[string]any{"output": "hi"}, false},
		} {
			t.Run(c.name, func(t *testing.T) {
				x := &domain.Execution{ID: store.NewID(), WorkspaceID: w.ID, AgentID: a.ID, Source: Source, Status: domain.StatusPending,
					Input: domain.JSONObject{}, Metadata: domain.JSONObject{}, TimeoutMS: 1000}
				if err := st.ExecutionCreate(ctx, x, &domain.Trace{WorkspaceID: w.ID, ExecutionID: &x.ID, AgentID: &a.ID, Name: "A"}); err != nil {
					t.Fatal(err)
				}
				start, _ := json.Marshal(map[string]any{"text": "Answer"})
				end, _ := json.Marshal(c.data)
				if err := st.EventAppend(ctx, x.ID, []domain.Event{{Seq: 1, Event: "delta", Data: start}}); err != nil {
					t.Fatal(err)
				}
				if err := st.EventAppend(ctx, x.ID, []domain.Event{{Seq: 2, Event: c.event, Data: end}}); err != nil {
					t.Fatal(err)
				}
				x.Status = c.status
				if got := d.interrupted(ctx, x); got != c.want {
					t.Fatalf("interrupted: %v, want %v", got, c.want)
				}
			})
		}
	})
}
