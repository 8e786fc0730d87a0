package retention

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/store/storetest"
)

// dbs is the migrated PostgreSQL database the tests copy, with TEST_DATABASE_URL.
var dbs = storetest.NewTemplate()

func TestMain(m *testing.M) {
	storetest.Main(m, dbs, goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
}

// forEachStore runs fn on in-memory SQLite and, with TEST_DATABASE_URL, on PostgreSQL.
func forEachStore(t *testing.T, fn func(t *testing.T, st *store.Store)) {
	storetest.ForEach(t, dbs, fn)
}

// bundle is a store with two workspaces ("keep", retention 0, and "short", retention 1 day)
// and a clock two days ahead.
type bundle struct {
	st          *store.Store
	keep, short string
	now         time.Time
}

func setup(t *testing.T, st *store.Store) *bundle {
	t.Helper()
	ctx := context.Background()
	b := &bundle{st: st, now: time.Now().Add(48 * time.Hour)}
	for _, w := range []struct {
		slug string
		days int
		id   *string
	}{{"keep", 0, &b.keep}, {"short", 1, &b.short}} {
		slug := w.slug + "-" + strings.ToLower(store.NewID())
		ws, err := st.WorkspaceCreate(ctx, &domain.Workspace{Name: w.slug, Slug: slug, RetentionDays: w.days})
		if err != nil {
			t.Fatal(err)
		}
		*w.id = ws.ID
	}
	return b
}

// run records an execution of ws and moves it to status.
func (b *bundle) run(t *testing.T, ws, status string) *domain.Execution {
	t.Helper()
	ctx := context.Background()
	x := &domain.Execution{ID: store.NewID(), WorkspaceID: ws, AgentID: "agent", Source: "api", Status: domain.StatusPending,
		Input: domain.JSONObject{}, Metadata: domain.JSONObject{}, TimeoutMS: 1000}
	if err := b.st.ExecutionCreate(ctx, x, &domain.Trace{WorkspaceID: ws, ExecutionID: &x.ID, Name: "A"}); err != nil {
		t.Fatal(err)
	}
	path := map[string][]string{domain.StatusPending: nil, domain.StatusRunning: {domain.StatusRunning},
		domain.StatusAwaitingApproval: {domain.StatusRunning, domain.StatusAwaitingApproval},
		domain.StatusCompleted:        {domain.StatusRunning, domain.StatusCompleted}, domain.StatusCancelled: {domain.StatusCancelled}}[status]
	for _, to := range path {
		if _, err := b.st.ExecutionTransition(ctx, ws, x.ID, to, domain.ExecutionPatch{}); err != nil {
			t.Fatalf("move %s to %s: %v", x.ID, to, err)
		}
	}
	return x
}

func (b *bundle) exists(t *testing.T, ws, id string) bool {
	t.Helper()
	_, err := b.st.ExecutionGet(context.Background(), ws, id)
	if err != nil && !store.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

func (b *bundle) purger(cfg Config) *Purger {
	cfg.Store, cfg.Batch = b.st, 2
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return b.now }
	}
	return New(cfg)
}

func TestPass(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		t.Run("ExpiresOnlyEndedRunsPastRetention", func(t *testing.T) {
			b := setup(t, st)
			var done []*domain.Execution
			for range 5 { // more than a batch
				done = append(done, b.run(t, b.short, domain.StatusCompleted))
			}
			cancelled := b.run(t, b.short, domain.StatusCancelled)
			active := []*domain.Execution{b.run(t, b.short, domain.StatusPending), b.run(t, b.short, domain.StatusRunning),
				b.run(t, b.short, domain.StatusAwaitingApproval)}
			kept := b.run(t, b.keep, domain.StatusCompleted)
			ingested := &domain.Trace{WorkspaceID: b.short, Name: "ingested", Status: "completed"}
			if err := st.TraceCreate(ctx, ingested); err != nil {
				t.Fatal(err)
			}

			// Nothing is a day old yet.
			r, err := b.purger(Config{Now: time.Now}).Pass(ctx)
			if err != nil || r.Executions != 0 || r.Traces != 0 {
				t.Fatalf("pass today: %+v %v", r, err)
			}
			r, err = b.purger(Config{}).Pass(ctx)
			if err != nil || r.Executions != 6 || r.Traces != 7 {
				t.Fatalf("pass in two days: %+v %v", r, err)
			}
			for _, x := range append(done, cancelled) {
				if b.exists(t, b.short, x.ID) {
					t.Errorf("ended run %s past retention is kept", x.ID)
				}
			}
			for _, x := range active {
				if !b.exists(t, b.short, x.ID) {
					t.Errorf("%s run %s was deleted", x.Status, x.ID)
				}
			}
			if !b.exists(t, b.keep, kept.ID) {
				t.Error("a run of a workspace keeping history forever was deleted")
			}
			if _, err := st.TraceGet(ctx, b.short, ingested.ID); !store.IsNotFound(err) {
				t.Errorf("ingested trace past retention: %v", err)
			}
		})
		t.Run("CeilingCapsForever", func(t *testing.T) {
			b := setup(t, st)
			kept := b.run(t, b.keep, domain.StatusCompleted)
			if _, err := b.purger(Config{MaxDays: 3}).Pass(ctx); err != nil || !b.exists(t, b.keep, kept.ID) {
				t.Fatalf("two days old under a ceiling of three: %v", err)
			}
			if _, err := b.purger(Config{MaxDays: 1}).Pass(ctx); err != nil || b.exists(t, b.keep, kept.ID) {
				t.Fatalf("two days old under a ceiling of one: %v", err)
			}
		})
		t.Run("DeletedWorkspaceWaitsForItsRuns", func(t *testing.T) {
			b := setup(t, st)
			b.run(t, b.short, domain.StatusCompleted)
			running := b.run(t, b.short, domain.StatusRunning)
			if _, err := st.WorkspaceDelete(ctx, b.short); err != nil {
				t.Fatal(err)
			}
			r, err := b.purger(Config{Now: time.Now}).Pass(ctx)
			if err != nil || r.Pending != 1 || r.Workspaces != 0 || !b.exists(t, b.short, running.ID) {
				t.Fatalf("pass with a run going: %+v %v", r, err)
			}
			var cancels atomic.Int32
			cancel := func(ctx context.Context, ws, id string) error {
				cancels.Add(1)
				_, err := st.ExecutionTransition(ctx, ws, id, domain.StatusCancelled, domain.ExecutionPatch{})
				return err
			}
			r, err = b.purger(Config{Now: time.Now, Cancel: cancel}).Pass(ctx)
			if err != nil || r.Workspaces != 1 || r.Executions != 2 || cancels.Load() != 1 {
				t.Fatalf("pass with cancel: %+v %v (cancels %d)", r, err, cancels.Load())
			}
			if ids, _ := st.WorkspaceListDeleted(ctx, 10); len(ids) != 0 {
				t.Fatalf("deleted workspaces left: %v", ids)
			}
			if _, err := st.WorkspaceGet(ctx, b.keep); err != nil {
				t.Fatalf("the other workspace: %v", err)
			}
		})
	})
}

func TestStartRunsOnlyWhileLeading(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *store.Store) {
		b := setup(t, st)
		x := b.run(t, b.short, domain.StatusCompleted)
		var leading atomic.Bool
		p := b.purger(Config{Interval: 5 * time.Millisecond, Leader: leading.Load})
		p.Start(context.Background())
		p.Start(context.Background()) // a second Start does nothing
		defer p.Stop()
		time.Sleep(50 * time.Millisecond)
		if !b.exists(t, b.short, x.ID) {
			t.Fatal("purged while not leading")
		}
		leading.Store(true)
		deadline := time.Now().Add(5 * time.Second)
		for b.exists(t, b.short, x.ID) {
			if time.Now().After(deadline) {
				t.Fatal("not purged while leading")
			}
			time.Sleep(5 * time.Millisecond)
		}
		p.Stop()
		p.Stop() // safe twice
	})
}

func TestDays(t *testing.T) {
	for _, c := range []struct{ days, max, want int }{{0, 0, 0}, {30, 0, 30}, {0, 90, 90}, {30, 90, 30}, {120, 90, 90}} {
		if got := Days(c.days, c.max); got != c.want {
			t.Errorf("Days(%d, %d) = %d, want %d", c.days, c.max, got, c.want)
		}
	}
}
