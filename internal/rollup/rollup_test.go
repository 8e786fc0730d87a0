package rollup

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
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

// passes records what each pass of a Packer logged: its groups and bins packed.
type passes struct {
	mu   sync.Mutex
	list [][2]int64
}

func (p *passes) Enabled(context.Context, slog.Level) bool { return true }
func (p *passes) WithAttrs([]slog.Attr) slog.Handler       { return p }
func (p *passes) WithGroup(string) slog.Handler            { return p }
func (p *passes) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "trace rollups packed" {
		return fmt.Errorf("unexpected log %q", r.Message)
	}
	var got [2]int64
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "groups":
			got[0] = a.Value.Int64()
		case "bins":
			got[1] = a.Value.Int64()
		}
		return true
	})
	p.mu.Lock()
	p.list = append(p.list, got)
	p.mu.Unlock()
	return nil
}

func (p *passes) all() [][2]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.list)
}

// bundle is a store with a workspace, and the passes of its Packer.
type bundle struct {
	st     *store.Store
	ws     string
	passes *passes
}

func setup(t *testing.T, st *store.Store) *bundle {
	t.Helper()
	w, err := st.WorkspaceCreate(context.Background(), &domain.Workspace{Name: "a", Slug: "a"})
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{st: st, ws: w.ID, passes: &passes{}}
}

func (b *bundle) packer(cfg Config) *Packer {
	cfg.Store, cfg.Logger, cfg.Batch = b.st, slog.New(b.passes), 2
	return New(cfg)
}

// runEnds starts and ends n runs of agent, durations 100 ms apart, as the runtime records them.
func (b *bundle) runEnds(t *testing.T, agent string, n int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		tr := &domain.Trace{WorkspaceID: b.ws, AgentID: &agent, Name: "run"}
		if err := b.st.TraceCreate(ctx, tr); err != nil {
			t.Fatal(err)
		}
		if err := b.st.TraceFinish(ctx, b.ws, tr.ID, domain.StatusCompleted, domain.TokenUsage{}, 0, domain.Now(), int64(100*(i+1))); err != nil {
			t.Fatal(err)
		}
	}
}

func (b *bundle) summary(t *testing.T) []*domain.TraceBucket {
	t.Helper()
	now := time.Now()
	rows, err := b.st.TraceSummary(context.Background(), b.ws, domain.Time{Time: now.Add(-time.Hour)}, domain.Time{Time: now.Add(time.Hour)}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestPass: a pass packs the bins of every group that has some (an agent's hour and day), in
// batches, and the summary reads the same from the packed rows; a second pass finds nothing.
func TestPass(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *store.Store) {
		b := setup(t, st)
		for _, agent := range []string{"a1", "a2", "a3"} {
			b.runEnds(t, agent, 5)
		}
		before := b.summary(t)
		p := b.packer(Config{})
		for range 2 {
			if err := p.Pass(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		// 3 agents' hour and day, 5 bins each; then nothing.
		if got := b.passes.all(); !slices.Equal(got, [][2]int64{{6, 30}, {0, 0}}) {
			t.Fatalf("passes packed %v", got)
		}
		after := b.summary(t)
		if len(after) != 3 || len(before) != 3 {
			t.Fatalf("%d buckets before, %d after", len(before), len(after))
		}
		for i := range after {
			bf, af := before[i], after[i]
			if *af.AgentID != *bf.AgentID || af.Runs != 5 || *af.LatencyMS.P50 != *bf.LatencyMS.P50 || *af.LatencyMS.P99 != *bf.LatencyMS.P99 {
				t.Fatalf("bucket %d: %+v %+v before, %+v %+v after", i, bf, bf.LatencyMS, af, af.LatencyMS)
			}
		}
	})
}

func TestStartRunsOnlyWhileLeading(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *store.Store) {
		b := setup(t, st)
		b.runEnds(t, "a1", 1)
		var leading atomic.Bool
		p := b.packer(Config{Interval: 5 * time.Millisecond, Leader: leading.Load})
		p.Start(context.Background())
		p.Start(context.Background()) // a second Start does nothing
		defer p.Stop()
		time.Sleep(50 * time.Millisecond)
		if got := b.passes.all(); len(got) > 0 {
			t.Fatalf("passes while not leading: %v", got)
		}
		leading.Store(true)
		deadline := time.Now().Add(5 * time.Second)
		for !slices.Contains(b.passes.all(), [2]int64{2, 2}) { // the run's hour and day
			if time.Now().After(deadline) {
				t.Fatalf("not packed while leading: %v", b.passes.all())
			}
			time.Sleep(5 * time.Millisecond)
		}
		p.Stop()
		p.Stop() // safe twice
	})
}
