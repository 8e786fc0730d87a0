package triggers

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentplane/agentplane/internal/dbtest"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm/simulated"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/seed"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/store/storetest"
	"github.com/agentplane/agentplane/internal/vault"
)

// dbs are the migrated databases the tests copy: a SQLite file, and a PostgreSQL database
// with TEST_DATABASE_URL.
var dbs = storetest.NewTemplate()

func TestMain(m *testing.M) {
	storetest.Main(m, dbs, goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"))
}

const testWS = "2o0yqLDGdJdFRBTuhdfPNEZdAvX"

// clock is a settable time for schedulers under test.
type clock struct{ ns atomic.Int64 }

func newClock(t time.Time) *clock {
	c := &clock{}
	c.set(t)
	return c
}
func (c *clock) set(t time.Time) { c.ns.Store(t.UnixNano()) }
func (c *clock) now() time.Time  { return time.Unix(0, c.ns.Load()).UTC() }
func at(s string) time.Time      { t, _ := time.Parse(time.RFC3339, s); return t }
func ms(t time.Time) *domain.Time {
	v := domain.Time{Time: t.UTC().Truncate(time.Millisecond)}
	return &v
}
func isoOf(t *domain.Time) string { return t.UTC().Format(time.RFC3339) }

// node is one server's store and engine on a database.
type node struct {
	st  *store.Store
	eng *runtime.Engine
}

func openNode(t *testing.T, url string) *node {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	eng := runtime.New(runtime.Config{Store: runtime.SQLStore{Store: st}, Router: runtime.SimulatedRouter{Model: simulated.New()}, Workers: 2, Logger: slog.New(slog.DiscardHandler)})
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		eng.Stop(sctx)
		st.Close()
	})
	return &node{st: st, eng: eng}
}

// setup makes the workspace, the catalog and an agent, and returns the agent.
func setup(t *testing.T, st *store.Store, schema string) *domain.Agent {
	t.Helper()
	ctx := context.Background()
	if _, err := st.WorkspaceCreate(ctx, &domain.Workspace{ID: testWS, Name: "T", Slug: "t"}); err != nil {
		t.Fatal(err)
	}
	if err := seed.LoadCatalog(ctx, st); err != nil {
		t.Fatal(err)
	}
	cfg := &domain.AgentConfig{Model: "gpt-4o-mini"}
	if schema != "" {
		cfg.InputSchema = json.RawMessage(schema)
	}
	a, err := st.AgentCreate(ctx, &domain.Agent{WorkspaceID: testWS, Name: "Reporter", Type: "simple", Status: "active"}, cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func schedule(t *testing.T, st *store.Store, agent, cron, tz string, catchUp bool, next time.Time, input domain.JSONObject) *domain.Trigger {
	t.Helper()
	tr, err := vault.TriggerCreate(context.Background(), st, &domain.Trigger{WorkspaceID: testWS, AgentID: agent, Type: "schedule", Name: "s", Enabled: true,
		Config: domain.JSONObject{"cron": cron, "timezone": tz, "catch_up": catchUp}, Input: input, NextRunAt: ms(next)}, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func runsOf(t *testing.T, st *store.Store, triggerID string) []*domain.Execution {
	t.Helper()
	xs, _, err := st.ExecutionList(context.Background(), testWS, domain.ExecutionFilter{Source: "schedule"}, domain.Page{Page: 1, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []*domain.Execution
	for _, x := range xs {
		if x.Metadata["trigger_id"] == triggerID {
			out = append(out, x)
		}
	}
	return out
}

func TestParseSchedule(t *testing.T) {
	s, err := ParseSchedule("0 9 * * 1-5", "America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	// Friday 2026-07-03 14:00 UTC is 10:00 in New York (EDT): the next tick is Monday 09:00 EDT.
	if got := s.Next(at("2026-07-03T14:00:00Z")); !got.Equal(at("2026-07-06T13:00:00Z")) {
		t.Fatalf("next %v", got)
	}
	// In winter New York is UTC-5.
	if got := s.Next(at("2026-01-05T00:00:00Z")); !got.Equal(at("2026-01-05T14:00:00Z")) {
		t.Fatalf("winter next %v", got)
	}
	for _, bad := range []struct{ cron, tz, field string }{
		{"* * * *", "", "cron"}, {"0 * * * * *", "", "cron"}, {"@daily", "", "cron"}, {"61 * * * *", "", "cron"},
		{"TZ=UTC * * * * *", "", "cron"}, {"* * * * *", "Mars/Base", "timezone"}, {"* * * * *", "Local", "timezone"},
	} {
		_, err := ParseSchedule(bad.cron, bad.tz)
		fe, ok := err.(*domain.FieldError)
		if !ok || fe.Field != bad.field {
			t.Fatalf("%q %q: %v", bad.cron, bad.tz, err)
		}
	}
}

func TestMapInput(t *testing.T) {
	doc := PlatformDocument("hello", "U1", map[string]any{"event": map[string]any{"channel": "C1"}})
	got := MapInput(DefaultPlatformMapping, doc)
	if len(got) != 1 || got["message"] != "hello" {
		t.Fatalf("default %v", got)
	}
	got = MapInput(map[string]string{"q": "text", "channel": "payload.event.channel", "missing": "payload.nope"}, doc)
	if got["q"] != "hello" || got["channel"] != "C1" || len(got) != 2 {
		t.Fatalf("mapped %v", got)
	}
	if got := MapInput(nil, []byte(`{"a":{"b":1}}`)); got["a"].(map[string]any)["b"] != 1.0 {
		t.Fatalf("whole body %v", got)
	}
	if got := MapInput(nil, []byte(`[1,2]`)); len(got) != 0 {
		t.Fatalf("array body %v", got)
	}
}

// TestSchedulerTicks: a tick fires once when due (not before), moves the schedule to its
// next tick and records the tick as last_run_at; the run carries the fixed input, source
// schedule and metadata.trigger_id.
func TestSchedulerTicks(t *testing.T) {
	n := openNode(t, "memory")
	a := setup(t, n.st, "")
	c := newClock(at("2026-03-02T10:04:59Z"))
	tr := schedule(t, n.st, a.ID, "*/5 * * * *", "UTC", false, at("2026-03-02T10:05:00Z"), domain.JSONObject{"message": "status report"})
	s := NewScheduler(SchedulerConfig{Store: n.st, Engine: n.eng, Now: c.now})
	ctx := context.Background()
	if fired, err := s.Tick(ctx); err != nil || fired != 0 {
		t.Fatalf("before the tick: %d %v", fired, err)
	}
	c.set(at("2026-03-02T10:05:00Z").Add(300 * time.Millisecond))
	if fired, err := s.Tick(ctx); err != nil || fired != 1 {
		t.Fatalf("at the tick: %d %v", fired, err)
	}
	if fired, _ := s.Tick(ctx); fired != 0 {
		t.Fatalf("the same tick fired again: %d", fired)
	}
	got, err := n.st.TriggerGet(ctx, testWS, tr.ID)
	if err != nil {
		t.Fatal(err)
	}
	if isoOf(got.NextRunAt) != "2026-03-02T10:10:00Z" || isoOf(got.LastRunAt) != "2026-03-02T10:05:00Z" {
		t.Fatalf("next %v last %v", got.NextRunAt, got.LastRunAt)
	}
	runs := runsOf(t, n.st, tr.ID)
	if len(runs) != 1 || runs[0].Input["message"] != "status report" || runs[0].Metadata["scheduled_at"] != "2026-03-02T10:05:00Z" {
		t.Fatalf("runs %+v", runs)
	}
	// The next two ticks, one each.
	for _, now := range []string{"2026-03-02T10:10:01Z", "2026-03-02T10:15:00Z"} {
		c.set(at(now))
		if fired, err := s.Tick(ctx); err != nil || fired != 1 {
			t.Fatalf("%s: %d %v", now, fired, err)
		}
	}
	if n := len(runsOf(t, n.st, tr.ID)); n != 3 {
		t.Fatalf("%d runs, want 3", n)
	}
}

// TestSchedulerMissedTicks: ticks missed while no scheduler ran are skipped without
// catch_up, and give exactly one run with it.
func TestSchedulerMissedTicks(t *testing.T) {
	n := openNode(t, "memory")
	a := setup(t, n.st, "")
	ctx := context.Background()
	skip := schedule(t, n.st, a.ID, "0 * * * *", "UTC", false, at("2026-03-02T10:00:00Z"), nil)
	catch := schedule(t, n.st, a.ID, "0 * * * *", "UTC", true, at("2026-03-02T10:00:00Z"), nil)
	c := newClock(at("2026-03-02T12:02:30Z")) // 10:00, 11:00 and 12:00 were missed
	s := NewScheduler(SchedulerConfig{Store: n.st, Engine: n.eng, Now: c.now})
	if fired, err := s.Tick(ctx); err != nil || fired != 1 {
		t.Fatalf("fired %d %v, want 1 (the catch-up)", fired, err)
	}
	if fired, _ := s.Tick(ctx); fired != 0 {
		t.Fatalf("fired again: %d", fired)
	}
	if r := runsOf(t, n.st, skip.ID); len(r) != 0 {
		t.Fatalf("skipping schedule ran %d times", len(r))
	}
	r := runsOf(t, n.st, catch.ID)
	if len(r) != 1 || r[0].Metadata["scheduled_at"] != "2026-03-02T12:00:00Z" {
		t.Fatalf("catch-up runs %+v", r)
	}
	for _, id := range []string{skip.ID, catch.ID} {
		got, _ := n.st.TriggerGet(ctx, testWS, id)
		if isoOf(got.NextRunAt) != "2026-03-02T13:00:00Z" {
			t.Fatalf("next %v", got.NextRunAt)
		}
	}
	// A tick found a little late (within a minute) is on time and runs.
	c.set(at("2026-03-02T13:00:40Z"))
	if fired, _ := s.Tick(ctx); fired != 2 {
		t.Fatalf("late tick fired %d, want 2", fired)
	}
}

// TestSchedulerInvalidInput: a schedule whose input no longer passes the agent's schema
// passes its tick without a run instead of retrying it every poll.
func TestSchedulerInvalidInput(t *testing.T) {
	n := openNode(t, "memory")
	a := setup(t, n.st, `{"type":"object","required":["topic"]}`)
	ctx := context.Background()
	tr := schedule(t, n.st, a.ID, "* * * * *", "UTC", false, at("2026-03-02T10:00:00Z"), domain.JSONObject{"other": 1})
	c := newClock(at("2026-03-02T10:00:01Z"))
	s := NewScheduler(SchedulerConfig{Store: n.st, Engine: n.eng, Now: c.now})
	if fired, err := s.Tick(ctx); err != nil || fired != 0 {
		t.Fatalf("fired %d %v", fired, err)
	}
	got, _ := n.st.TriggerGet(ctx, testWS, tr.ID)
	if isoOf(got.NextRunAt) != "2026-03-02T10:01:00Z" || got.LastRunAt != nil {
		t.Fatalf("next %v last %v", got.NextRunAt, got.LastRunAt)
	}
	if c, _ := n.st.ExecutionCount(ctx, testWS, domain.Time{}, nil); c != 0 {
		t.Fatalf("%d executions", c)
	}
}

// TestSchedulerNodes: two schedulers on one database (two nodes, each with its own store
// and engine), ticking at the same moments, run every tick of every schedule exactly once:
// on a SQLite file and on PostgreSQL.
func TestSchedulerNodes(t *testing.T) {
	urls := map[string]string{"sqlite": dbs.SQLiteFile(t)}
	if u := dbs.URL(t); u != "" {
		urls["postgres"] = u
	} else {
		t.Log(dbtest.SkipMessage)
	}
	for name, url := range urls {
		t.Run(name, func(t *testing.T) {
			a, b := openNode(t, url), openNode(t, url)
			agent := setup(t, a.st, "")
			start := at("2026-03-02T10:00:00Z")
			const schedules, minutes = 8, 6
			var ids []string
			for range schedules {
				ids = append(ids, schedule(t, a.st, agent.ID, "* * * * *", "UTC", false, start, nil).ID)
			}
			c := newClock(start)
			sa := NewScheduler(SchedulerConfig{Store: a.st, Engine: a.eng, Now: c.now})
			sb := NewScheduler(SchedulerConfig{Store: b.st, Engine: b.eng, Now: c.now})
			var total atomic.Int64
			for m := range minutes {
				c.set(start.Add(time.Duration(m)*time.Minute + 500*time.Millisecond))
				var wg sync.WaitGroup
				for _, s := range []*Scheduler{sa, sb, sa, sb} {
					wg.Go(func() {
						fired, err := s.Tick(context.Background())
						if err != nil {
							t.Error(err)
						}
						total.Add(int64(fired))
					})
				}
				wg.Wait()
			}
			if got := total.Load(); got != schedules*minutes {
				t.Fatalf("%d runs started, want %d", got, schedules*minutes)
			}
			for _, id := range ids {
				runs := runsOf(t, a.st, id)
				seen := map[any]bool{}
				for _, r := range runs {
					if seen[r.Metadata["scheduled_at"]] {
						t.Fatalf("tick %v of %s ran twice", r.Metadata["scheduled_at"], id)
					}
					seen[r.Metadata["scheduled_at"]] = true
				}
				if len(runs) != minutes {
					t.Fatalf("schedule %s ran %d times, want %d", id, len(runs), minutes)
				}
			}
		})
	}
}

// TestSchedulerLifecycle: Start runs the loop (it fires a due tick on its own), Stop ends it
// and may be called twice, or without Start.
func TestSchedulerLifecycle(t *testing.T) {
	n := openNode(t, "memory")
	a := setup(t, n.st, "")
	c := newClock(at("2026-03-02T10:00:05Z"))
	tr := schedule(t, n.st, a.ID, "* * * * *", "UTC", false, at("2026-03-02T10:00:00Z"), nil)
	NewScheduler(SchedulerConfig{Store: n.st, Engine: n.eng}).Stop()
	s := NewScheduler(SchedulerConfig{Store: n.st, Engine: n.eng, Now: c.now, PollInterval: 10 * time.Millisecond})
	s.Start(context.Background())
	s.Start(context.Background())
	deadline := time.Now().Add(5 * time.Second)
	for len(runsOf(t, n.st, tr.ID)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the loop fired nothing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Stop()
	s.Stop()
}
