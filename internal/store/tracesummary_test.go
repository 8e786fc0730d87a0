package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/pressly/goose/v3"
)

// near reports whether a sketch's percentile is within rollupAccuracy of the exact one.
func near(got, want float64) bool {
	return math.Abs(got-want) <= rollupAccuracy*math.Abs(want)+1e-9
}

// rollupTrace is one trace of the rollup tests, as inserted.
type rollupTrace struct {
	agent          string
	start          time.Time
	status         string
	durMS, in, out int64
	cost           float64
}

// exactSummary computes the summary of traces (started from the start of from's bucket on)
// in Go, with percentile_cont's interpolation.
func exactSummary(traces []rollupTrace, from time.Time, bucket time.Duration) []*domain.TraceBucket {
	from = from.Truncate(bucket)
	type key struct {
		agent string
		b     int64
	}
	groups := map[key]*domain.TraceBucket{}
	durs := map[key][]float64{}
	for _, tr := range traces {
		if tr.start.Before(from) {
			continue
		}
		k := key{tr.agent, tr.start.UnixMilli() / bucket.Milliseconds() * bucket.Milliseconds()}
		g := groups[k]
		if g == nil {
			g = &domain.TraceBucket{BucketStart: domain.TimeFromMillis(k.b)}
			if tr.agent != "" {
				g.AgentID = domain.PtrTo(tr.agent)
			}
			groups[k] = g
		}
		g.Runs++
		if tr.status == domain.StatusFailed {
			g.Errors++
		}
		g.TokenUsage.PromptTokens += int(tr.in)
		g.TokenUsage.CompletionTokens += int(tr.out)
		g.Cost += tr.cost
		if tr.durMS >= 0 {
			durs[k] = append(durs[k], float64(tr.durMS))
		}
	}
	out := []*domain.TraceBucket{}
	for k, g := range groups {
		d := durs[k]
		slices.Sort(d)
		pct := func(q float64) *float64 {
			r := q * float64(len(d)-1)
			lo := int(r)
			v := d[lo]
			if lo+1 < len(d) {
				v += (r - float64(lo)) * (d[lo+1] - d[lo])
			}
			return &v
		}
		if len(d) > 0 {
			g.LatencyMS = domain.Latency{P50: pct(0.5), P95: pct(0.95), P99: pct(0.99)}
		}
		out = append(out, traceBucketFinish(g, k.b))
	}
	slices.SortFunc(out, func(a, b *domain.TraceBucket) int {
		if c := a.BucketStart.Compare(b.BucketStart.Time); c != 0 {
			return c
		}
		return compareStrings(deref(a.AgentID), deref(b.AgentID))
	})
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// checkSummary compares a summary with the exact one: counts and tokens equal, cost to 1e-9,
// percentiles within rollupAccuracy.
func checkSummary(t *testing.T, got, want []*domain.TraceBucket) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d buckets, want %d", len(got), len(want))
	}
	for i, g := range got {
		w := want[i]
		if deref(g.AgentID) != deref(w.AgentID) || (g.AgentID == nil) != (w.AgentID == nil) || !g.BucketStart.Equal(w.BucketStart.Time) ||
			g.Runs != w.Runs || g.Errors != w.Errors || g.ErrorRate != w.ErrorRate || g.TokenUsage != w.TokenUsage ||
			math.Abs(g.Cost-w.Cost) > 1e-9*math.Max(1, w.Cost) {
			t.Fatalf("bucket %d: got %+v, want %+v", i, g, w)
		}
		gl, wl := g.LatencyMS, w.LatencyMS
		if (gl.P50 == nil) != (wl.P50 == nil) {
			t.Fatalf("bucket %d latency: got %+v, want %+v", i, gl, wl)
		}
		if wl.P50 != nil && (!near(*gl.P50, *wl.P50) || !near(*gl.P95, *wl.P95) || !near(*gl.P99, *wl.P99)) {
			t.Fatalf("bucket %d (%s, %d runs) latency: got p50 %v p95 %v p99 %v, want %v %v %v", i, deref(g.AgentID), g.Runs,
				*gl.P50, *gl.P95, *gl.P99, *wl.P50, *wl.P95, *wl.P99)
		}
	}
}

// rollupTraces makes n varied traces over the three days before hour: three agents and none,
// durations log-normal around 400 ms from 0 ms to minutes, 5 % failed, 2 % still running.
func rollupTraces(n int, hour time.Time) []rollupTrace {
	r := rand.New(rand.NewPCG(18, 20))
	out := make([]rollupTrace, n)
	for i := range out {
		tr := rollupTrace{agent: []string{"", "agent-a", "agent-b", "agent-c"}[r.IntN(4)], status: domain.StatusCompleted,
			start: hour.Add(-time.Duration(r.Int64N(int64(72 * time.Hour)))), in: r.Int64N(2000), out: r.Int64N(500),
			cost: float64(r.IntN(1000)) / 1e4, durMS: int64(math.Round(math.Exp(6 + 1.2*r.NormFloat64())))}
		switch {
		case i%50 == 0:
			tr.status, tr.durMS = domain.StatusRunning, -1
		case i%20 == 1:
			tr.status = domain.StatusFailed
		case i%97 == 2:
			tr.durMS = 0
		}
		out[i] = tr
	}
	return out
}

func insertRollupTraces(t *testing.T, s *Store, ws string, traces []rollupTrace) {
	t.Helper()
	err := s.InTx(context.Background(), func(tx *Store) error {
		for _, tr := range traces {
			mkTrace(t, tx, ws, tr.agent, tr.start, tr.status, tr.durMS, tr.in, tr.out, tr.cost)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTraceRollupSummary: the summary read from the rollups equals the one computed from the
// traces themselves, by hour and by day.
func TestTraceRollupSummary(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws, other := mustWorkspace(t, s, "a"), mustWorkspace(t, s, "b")
		now := time.Now().UTC()
		traces := rollupTraces(4000, now.Truncate(time.Hour))
		insertRollupTraces(t, s, ws, traces)
		insertRollupTraces(t, s, other, traces[:100])
		// A trace whose agent is the empty string is summarised under no agent, as one without.
		traces = append(traces, rollupTrace{agent: "", start: now.Add(-time.Hour), status: domain.StatusCompleted, durMS: 5})
		mkTrace(t, s, ws, "", now.Add(-time.Hour), domain.StatusCompleted, 5, 0, 0, 0)

		to := domain.Time{Time: now}
		for _, c := range []struct {
			window, bucket time.Duration
		}{{24 * time.Hour, time.Hour}, {7 * 24 * time.Hour, 24 * time.Hour}, {30 * time.Hour, 24 * time.Hour}, {2 * time.Hour, time.Hour},
			{7 * 24 * time.Hour, time.Hour}} {
			t.Run(fmt.Sprint(c.window, "/", c.bucket), func(t *testing.T) {
				from := to.Add(-c.window)
				got, err := s.TraceSummary(ctx, ws, domain.Time{Time: from}, to, c.bucket)
				if err != nil {
					t.Fatal(err)
				}
				// The window starts at the start of its first bucket.
				checkSummary(t, got, exactSummary(traces, from, c.bucket))
			})
		}
		if _, err := s.TraceSummary(ctx, ws, domain.Time{Time: now.Add(-time.Hour)}, to, time.Minute); err == nil {
			t.Fatal("a bucket of a minute was accepted")
		}
	})
}

// TestTraceRollupRunEnds: a run counts from its start, and its end shows in the summary at
// once (errors, tokens, cost and latency), through TraceFinish as the runtime calls it.
func TestTraceRollupRunEnds(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "a")
		tr := &domain.Trace{WorkspaceID: ws, AgentID: domain.PtrTo("ag1"), Name: "Bot"}
		if err := s.TraceCreate(ctx, tr); err != nil {
			t.Fatal(err)
		}
		summary := func() *domain.TraceBucket {
			t.Helper()
			to := domain.Now()
			rows, err := s.TraceSummary(ctx, ws, domain.Time{Time: to.Add(-time.Hour)}, domain.Time{Time: to.Add(time.Second)}, time.Hour)
			if err != nil || len(rows) != 1 {
				t.Fatalf("summary: %+v %v", rows, err)
			}
			return rows[0]
		}
		if b := summary(); b.Runs != 1 || b.Errors != 0 || b.LatencyMS.P50 != nil || *b.AgentID != "ag1" {
			t.Fatalf("running: %+v", b)
		}
		err := s.InTx(ctx, func(tx *Store) error {
			return tx.TraceFinish(ctx, ws, tr.ID, domain.StatusFailed, domain.TokenUsage{PromptTokens: 30, CompletionTokens: 12}, 0.25, domain.Now(), 1234)
		})
		if err != nil {
			t.Fatal(err)
		}
		b := summary()
		if b.Runs != 1 || b.Errors != 1 || b.ErrorRate != 1 || b.TokenUsage.TotalTokens != 42 || b.Cost != 0.25 || b.LatencyMS.P50 == nil ||
			!near(*b.LatencyMS.P50, 1234) || !near(*b.LatencyMS.P99, 1234) {
			t.Fatalf("ended: %+v %+v", b, b.LatencyMS)
		}
	})
}

// TestTraceRollupIngestResent: an ingested trace sent again, and then with one more span,
// counts once, with its latest totals and duration.
func TestTraceRollupIngestResent(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "a")
		// Three hours back: the trace's row is inserted at the time of ingest, then moved to
		// its first span's start (another hour, and perhaps another day).
		t0 := domain.Time{Time: time.Now().UTC().Add(-3 * time.Hour)}
		at := func(ms int) *domain.Time {
			v := domain.Time{Time: t0.Add(time.Duration(ms) * time.Millisecond)}
			return &v
		}
		const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
		root := "00f067aa0ba902b7"
		spans := []*domain.Span{
			{ID: root, TraceID: trace, Name: "run", Kind: "agent", Status: "ok", StartedAt: t0, EndedAt: at(900), TraceAgentID: "ext"},
			{ID: "a1", TraceID: trace, ParentID: &root, Name: "llm", Kind: "llm", Status: "ok", StartedAt: *at(100), EndedAt: at(600),
				TokenUsage: domain.TokenUsage{PromptTokens: 100, CompletionTokens: 20}, Cost: 0.5},
		}
		check := func(tokens int, cost, dur float64, errors int64) {
			t.Helper()
			to := domain.Now()
			rows, err := s.TraceSummary(ctx, ws, domain.Time{Time: to.Add(-24 * time.Hour)}, to, 24*time.Hour)
			if err != nil || len(rows) != 1 {
				t.Fatalf("summary: %+v %v", rows, err)
			}
			b := rows[0]
			if b.Runs != 1 || b.Errors != errors || b.TokenUsage.TotalTokens != tokens || b.Cost != cost || *b.AgentID != "ext" ||
				!near(*b.LatencyMS.P50, dur) || !near(*b.LatencyMS.P99, dur) {
				t.Fatalf("summary: %+v %+v", b, b.LatencyMS)
			}
		}
		for range 3 {
			if err := s.SpanIngest(ctx, ws, spans); err != nil {
				t.Fatal(err)
			}
			check(120, 0.5, 900, 0)
		}
		// One more span, an error ending later: the trace's totals change, still one run.
		if err := s.SpanIngest(ctx, ws, []*domain.Span{{ID: "a2", TraceID: trace, ParentID: &root, Name: "llm", Kind: "llm", Status: "error",
			StartedAt: *at(700), EndedAt: at(2500), TokenUsage: domain.TokenUsage{PromptTokens: 10, CompletionTokens: 5}, Cost: 0.25}}); err != nil {
			t.Fatal(err)
		}
		check(135, 0.75, 2500, 1)
	})
}

// TestTraceRollupBackfill: migration 00020 rolls up the traces stored before it.
func TestTraceRollupBackfill(t *testing.T) {
	forEachStoreAt(t, 19, func(t *testing.T, s *Store, _ *goose.Provider) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "a")
		now := time.Now().UTC()
		traces := rollupTraces(2000, now.Truncate(time.Hour))
		insertRollupTraces(t, s, ws, traces)
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		to := domain.Time{Time: now}
		from := to.Add(-24 * time.Hour)
		got, err := s.TraceSummary(ctx, ws, domain.Time{Time: from}, to, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		checkSummary(t, got, exactSummary(traces, from, time.Hour))
		days, err := s.TraceSummary(ctx, ws, domain.Time{Time: to.Add(-7 * 24 * time.Hour)}, to, 24*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		checkSummary(t, days, exactSummary(traces, to.Add(-7*24*time.Hour), 24*time.Hour))
	})
}

// TestTraceRollupBins: the bin the migration's SQL gives a duration is the sketch mapping's,
// for every duration up to 1,000 ms and on both sides of every bin's lower bound up to
// 200,000 ms (and 0 ms is the zero bin).
func TestTraceRollupBins(t *testing.T) {
	var durations []int64
	for ms := int64(0); ms <= 1000; ms++ {
		durations = append(durations, ms)
	}
	for i := rollupMapping.Index(1000); ; i++ {
		lb := int64(math.Floor(rollupMapping.LowerBound(i)))
		if lb > 200000 {
			break
		}
		durations = append(durations, lb-1, lb, lb+1, lb+2)
	}
	values := make([]string, len(durations))
	for i, ms := range durations {
		values[i] = fmt.Sprintf("(%d)", ms)
	}
	values[0] = "(CAST(0 AS BIGINT))"
	forEachStore(t, func(t *testing.T, s *Store) {
		expr := "CASE WHEN ms < 1 THEN -1 ELSE CAST(floor(ln(ms) * 99.999166661110607) AS INTEGER) END"
		if s.dialect == Postgres {
			expr = "trace_rollup_bin(ms)"
		}
		rows, err := s.r.QueryContext(context.Background(), `WITH n(ms) AS (VALUES `+strings.Join(values, ",")+`)
			SELECT ms, `+expr+` FROM n`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		count := 0
		for rows.Next() {
			var ms int64
			var bin int
			if err := rows.Scan(&ms, &bin); err != nil {
				t.Fatal(err)
			}
			want := zeroBin
			if ms > 0 {
				want = rollupMapping.Index(float64(ms))
			}
			if bin != want {
				t.Fatalf("%d ms: bin %d, want %d", ms, bin, want)
			}
			count++
		}
		if err := rows.Err(); err != nil || count != len(durations) {
			t.Fatalf("%d durations of %d: %v", count, len(durations), err)
		}
	})
}

// TestTraceRollupIngestDeadlock: a batch of ingested traces that deadlocks on the rollup rows
// with another transaction (PostgreSQL aborts the batch) is run again and stored once.
func TestTraceRollupIngestDeadlock(t *testing.T) {
	s := openTestPostgres(t)
	// PostgreSQL aborts the side whose deadlock_timeout (1 s) runs out once the cycle is
	// closed. On a loaded machine the batch's can run out before the other transaction closes
	// the cycle; that one is then the victim and the attempt proves nothing: it is tried again.
	for attempt := range 5 {
		if ingestDeadlocked(t, s, attempt) {
			return
		}
		t.Logf("attempt %d: the other transaction was the deadlock's victim; trying again", attempt)
	}
	t.Fatal("the ingested batch was never the deadlock's victim in 5 attempts")
}

// ingestDeadlocked runs one attempt of TestTraceRollupIngestDeadlock in a workspace of its
// own; false when the other transaction, not the batch, was the deadlock's victim.
func ingestDeadlocked(t *testing.T, s *Store, attempt int) bool {
	ctx := context.Background()
	ws := mustWorkspace(t, s, fmt.Sprint("a", attempt))
	start := domain.Time{Time: time.Now().UTC().Add(-time.Second)}
	end := domain.Time{Time: start.Add(100 * time.Millisecond)}
	shard := func(id string) int {
		var n int
		if err := s.r.QueryRowContext(ctx, "SELECT hashtext($1) & 7", id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// A raw trace id of the same rollup shard as the ingested trace id.
	sameShard := func(id, prefix string) string {
		for i := 0; ; i++ {
			if c := fmt.Sprint(prefix, i); shard(c) == shard(id) {
				return c
			}
		}
	}
	ingX, ingY := fmt.Sprint("ing-x-", attempt), fmt.Sprint("ing-y-", attempt)
	rawX, rawY := sameShard(ingX, "raw-x-"), sameShard(ingY, "raw-y-")
	insert := func(tx interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
	}, id, agent string) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO traces (id, workspace_id, agent_id, name, status, started_at, created_at)
			VALUES ($1, $2, $3, 'run', 'completed', $4, $4)`, id, ws, agent, start)
		return err
	}

	// The other transaction holds agent x's rollup rows; the batch takes agent y's, then waits
	// for agent x's; the other transaction then waits for agent y's: a deadlock.
	raw, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Rollback()
	if err := insert(raw, rawX, "x"); err != nil {
		t.Fatal(err)
	}
	var rawPID int
	if err := raw.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&rawPID); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- s.SpanIngest(ctx, ws, []*domain.Span{
			{ID: fmt.Sprint("s1-", attempt), TraceID: ingY, Name: "y", Kind: "agent", Status: "ok", StartedAt: start, EndedAt: &end, TraceAgentID: "y"},
			{ID: fmt.Sprint("s2-", attempt), TraceID: ingX, Name: "x", Kind: "agent", Status: "ok", StartedAt: start, EndedAt: &end, TraceAgentID: "x"},
		})
	}()
	for waiting := 0; waiting == 0; time.Sleep(20 * time.Millisecond) {
		if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))", rawPID).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
	victim := false
	if err := insert(raw, rawY, "y"); err != nil {
		if !strings.Contains(err.Error(), "40P01") {
			t.Fatal(err)
		}
		victim = true
		raw.Rollback()
	} else if err := raw.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("ingest: %v", err)
	}
	if victim {
		return false
	}
	to := domain.Now()
	rows, err := s.TraceSummary(ctx, ws, domain.Time{Time: to.Add(-2 * time.Hour)}, domain.Time{Time: to.Add(time.Hour)}, 24*time.Hour)
	if err != nil || len(rows) != 2 || rows[0].Runs != 2 || rows[1].Runs != 2 {
		t.Fatalf("summary: %+v %v", rows, err)
	}
	return true
}
