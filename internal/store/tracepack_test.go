package store

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/dbtest"
	"github.com/agentplane/agentplane/internal/domain"
)

// binKey is one bin of one rollup group: what the trace rollups count.
type binKey struct {
	period, start int64
	agent         string
	bin           int
}

// storedBins sums the counts of the workspace's packed rows and bin rows per group and bin,
// leaving out totals of 0: what the summary reads.
func storedBins(t *testing.T, s *Store, ws string) map[binKey]int64 {
	t.Helper()
	out := map[binKey]int64{}
	add := func(k binKey, n int64) {
		if out[k] += n; out[k] == 0 {
			delete(out, k)
		}
	}
	rows, err := s.r.QueryContext(context.Background(), "SELECT period, period_start, agent_id, bins FROM trace_rollup_sketches WHERE workspace_id = $1", ws)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var k binKey
		var list []byte
		if err := rows.Scan(&k.period, &k.start, &k.agent, &list); err != nil {
			t.Fatal(err)
		}
		if err := eachBin(list, func(bin int, n int64) { k.bin = bin; add(k, n) }); err != nil {
			t.Fatal(err)
		}
	}
	rows, err = s.r.QueryContext(context.Background(), "SELECT period, period_start, agent_id, bin, count FROM trace_rollup_bins WHERE workspace_id = $1", ws)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var k binKey
		var n int64
		if err := rows.Scan(&k.period, &k.start, &k.agent, &k.bin, &n); err != nil {
			t.Fatal(err)
		}
		add(k, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// tracesOf reads the workspace's traces back as rollupTraces (durMS -1: none yet).
func tracesOf(t *testing.T, s *Store, ws string) []rollupTrace {
	t.Helper()
	rows, err := s.r.QueryContext(context.Background(), `SELECT coalesce(agent_id, ''), started_at, status, coalesce(duration_ms, -1),
		prompt_tokens, completion_tokens, cost FROM traces WHERE workspace_id = $1`, ws)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []rollupTrace
	for rows.Next() {
		var tr rollupTrace
		var start int64
		if err := rows.Scan(&tr.agent, &start, &tr.status, &tr.durMS, &tr.in, &tr.out, &tr.cost); err != nil {
			t.Fatal(err)
		}
		tr.start = time.UnixMilli(start).UTC()
		out = append(out, tr)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// exactBins counts the traces per group (hour and day) and bin, as the triggers do.
func exactBins(traces []rollupTrace) map[binKey]int64 {
	out := map[binKey]int64{}
	for _, tr := range traces {
		if tr.durMS < 0 {
			continue
		}
		bin := zeroBin
		if tr.durMS > 0 {
			bin = rollupMapping.Index(float64(tr.durMS))
		}
		for _, p := range []int64{3600000, 86400000} {
			out[binKey{p, tr.start.UnixMilli() / p * p, tr.agent, bin}]++
		}
	}
	return out
}

// checkRollups: the workspace's stored bins are exactly those of its traces, and its summary
// (by hour over 3 days, by day over 4) the one computed from them.
func checkRollups(t *testing.T, s *Store, ws string, now time.Time) {
	t.Helper()
	traces := tracesOf(t, s, ws)
	got, want := storedBins(t, s, ws), exactBins(traces)
	if !maps.Equal(got, want) {
		for k, n := range want {
			if got[k] != n {
				t.Errorf("%+v: %d stored, %d traces", k, got[k], n)
			}
		}
		for k, n := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("%+v: %d stored, no trace", k, n)
			}
		}
		t.FailNow()
	}
	to := domain.Time{Time: now.Add(time.Hour)}
	for _, c := range []struct{ window, bucket time.Duration }{{75 * time.Hour, time.Hour}, {4 * 24 * time.Hour, 24 * time.Hour}} {
		from := to.Add(-c.window)
		sum, err := s.TraceSummary(context.Background(), ws, domain.Time{Time: from}, to, c.bucket)
		if err != nil {
			t.Fatal(err)
		}
		checkSummary(t, sum, exactSummary(traces, from, c.bucket))
	}
}

// countRows counts the rows of a query.
func countRows(t *testing.T, s *Store, q string, args ...any) int {
	t.Helper()
	n, err := s.count(context.Background(), q, args)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTraceRollupPack: a pass moves every bin row into the packed rows (one per group, bins
// ascending, no count of 0), the summary reads the same before and after, and bin rows written
// after a pass (a run ending, a trace moving bins, periods and agents) add to the packed
// counts, negative ones included, until the next pass packs them too.
func TestTraceRollupPack(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws, other := mustWorkspace(t, s, "a"), mustWorkspace(t, s, "b")
		now := time.Now().UTC()
		// 1,000 runs over 72 hours and 4 agents: a few hundred groups of several bins each.
		insertRollupTraces(t, s, ws, rollupTraces(1000, now.Truncate(time.Hour)))
		insertRollupTraces(t, s, other, rollupTraces(200, now.Truncate(time.Hour)))
		checkRollups(t, s, ws, now)
		groups := countRows(t, s, "SELECT count(*) FROM (SELECT DISTINCT workspace_id, period, period_start, agent_id, model FROM trace_rollup_bins) g")
		bins := countRows(t, s, "SELECT count(*) FROM trace_rollup_bins")

		t.Run("a pass packs every group", func(t *testing.T) {
			g, n, err := s.TraceRollupPack(ctx, 7) // batches of 7 groups: many batches
			if err != nil || g != groups || n != bins {
				t.Fatalf("packed %d groups, %d bins (%v); want %d, %d", g, n, err, groups, bins)
			}
			if left := countRows(t, s, "SELECT count(*) FROM trace_rollup_bins"); left != 0 {
				t.Fatalf("%d bin rows left", left)
			}
			if packed := countRows(t, s, "SELECT count(*) FROM trace_rollup_sketches"); packed != groups {
				t.Fatalf("%d packed rows, want %d", packed, groups)
			}
			rows, err := s.r.QueryContext(ctx, "SELECT bins FROM trace_rollup_sketches")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			for rows.Next() {
				var list []byte
				must(t, rows.Scan(&list))
				last := zeroBin - 1
				must(t, eachBin(list, func(bin int, n int64) {
					if bin <= last || n <= 0 {
						t.Fatalf("packed row %q: bins not ascending or a count not positive", list)
					}
					last = bin
				}))
			}
			checkRollups(t, s, ws, now)
			checkRollups(t, s, other, now)
			if g, n, err := s.TraceRollupPack(ctx, 7); err != nil || g != 0 || n != 0 {
				t.Fatalf("a second pass packed %d groups, %d bins (%v)", g, n, err)
			}
		})

		t.Run("bin rows after a pass add to the packed counts", func(t *testing.T) {
			// Durations change (bins subtracted from packed counts), traces move to other
			// hours and agents, running ones end, new ones start.
			steps := []string{
				"UPDATE traces SET duration_ms = duration_ms * 3 + 1 WHERE workspace_id = $1 AND duration_ms IS NOT NULL AND started_at % 5 = 0",
				"UPDATE traces SET started_at = started_at - 5400000 WHERE workspace_id = $1 AND started_at % 7 = 1",
				"UPDATE traces SET agent_id = 'agent-z' WHERE workspace_id = $1 AND started_at % 11 = 2",
				"UPDATE traces SET duration_ms = 250, status = 'completed' WHERE workspace_id = $1 AND duration_ms IS NULL",
			}
			for _, q := range steps {
				if _, err := s.exec(ctx, q, ws); err != nil {
					t.Fatal(err)
				}
			}
			insertRollupTraces(t, s, ws, rollupTraces(300, now.Truncate(time.Hour).Add(time.Hour)))
			if countRows(t, s, "SELECT count(*) FROM trace_rollup_bins WHERE count < 0") == 0 {
				t.Fatal("no negative bin row: the test changes no packed count")
			}
			checkRollups(t, s, ws, now)
			packLeavingNoBins(t, s, 100)
			checkRollups(t, s, ws, now)
		})

		t.Run("a deleted workspace is left to its purge", func(t *testing.T) {
			insertRollupTraces(t, s, other, rollupTraces(50, now.Truncate(time.Hour)))
			if _, err := s.WorkspaceDelete(ctx, other); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.TraceRollupPack(ctx, 100); err != nil {
				t.Fatal(err)
			}
			if countRows(t, s, "SELECT count(*) FROM trace_rollup_bins WHERE workspace_id = $1", other) == 0 {
				t.Fatal("the bins of a deleted workspace were packed")
			}
			for done := false; !done; {
				var err error
				if _, done, err = s.WorkspacePurge(ctx, other, 1000); err != nil {
					t.Fatal(err)
				}
			}
			for _, table := range []string{"trace_rollup_sketches", "trace_rollup_bins"} {
				if n := countRows(t, s, "SELECT count(*) FROM "+table+" WHERE workspace_id = $1", other); n != 0 {
					t.Fatalf("%d rows of %s left after the purge", n, table)
				}
			}
			checkRollups(t, s, ws, now)
		})

		t.Run("expired traces leave their packed rollups", func(t *testing.T) {
			before := storedBins(t, s, ws)
			sum, err := s.TraceSummary(ctx, ws, domain.Time{Time: now.Add(-75 * time.Hour)}, domain.Time{Time: now.Add(time.Hour)}, 24*time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			for {
				c, err := s.TracesPurge(ctx, ws, now.Add(2*time.Hour), 500)
				if err != nil {
					t.Fatal(err)
				}
				if c.Traces == 0 {
					break
				}
			}
			if n := countRows(t, s, "SELECT count(*) FROM traces WHERE workspace_id = $1", ws); n != 0 {
				t.Fatalf("%d traces left", n)
			}
			if after := storedBins(t, s, ws); !maps.Equal(after, before) {
				t.Fatal("the purge of the traces changed their rollup bins")
			}
			again, err := s.TraceSummary(ctx, ws, domain.Time{Time: now.Add(-75 * time.Hour)}, domain.Time{Time: now.Add(time.Hour)}, 24*time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			checkSummary(t, again, sum)
		})
	})
}

// TestTraceRollupPackConcurrent: runs end and traces change bins while two passes at once pack
// the same groups (the current hour and day), on PostgreSQL many transactions at once: no count
// is lost or counted twice, before the last pass and after it, and no run's transaction nor
// pass fails.
func TestTraceRollupPackConcurrent(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "a")
		now := time.Now().UTC()
		const writers, runs = 6, 60
		var wg sync.WaitGroup
		errs := make(chan error, writers+2)
		stop := make(chan struct{})
		var mu sync.Mutex
		passes, moved := 0, 0
		for range 2 { // two leaders at once (one lost the lock unnoticed), packing again and again
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					_, n, err := s.TraceRollupPack(ctx, 3)
					if err != nil {
						errs <- fmt.Errorf("pass: %w", err)
						return
					}
					mu.Lock()
					passes, moved = passes+1, moved+n
					mu.Unlock()
				}
			}()
		}
		var writes sync.WaitGroup
		for w := range writers {
			writes.Add(1)
			go func() {
				defer writes.Done()
				if err := rollupWriter(ctx, s, ws, w, runs, now); err != nil {
					errs <- fmt.Errorf("writer %d: %w", w, err)
				}
			}()
		}
		writes.Wait()
		close(stop)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		t.Logf("%d passes moved %d bin rows beside %d run ends", passes, moved, writers*runs)
		if moved == 0 {
			t.Fatal("no pass moved a bin row while the runs ended")
		}
		checkRollups(t, s, ws, now)
		packLeavingNoBins(t, s, 3)
		checkRollups(t, s, ws, now)
	})
}

// rollupWriter starts and ends runs of two agents in the current hour, one transaction each
// as the runtime's, and lengthens some ended ones as a re-sent ingested trace does (a
// longer duration: a trace's rows are locked in the order of their bins, so that the writers
// never deadlock with each other).
func rollupWriter(ctx context.Context, s *Store, ws string, w, runs int, now time.Time) error {
	r := rand.New(rand.NewPCG(uint64(w), 38))
	var ended []string
	for i := range runs {
		tr := &domain.Trace{WorkspaceID: ws, AgentID: domain.PtrTo(fmt.Sprint("agent-", i%2)), Name: "run",
			StartedAt: domain.Time{Time: now.Add(-time.Duration(r.IntN(600)) * time.Second)}}
		if err := s.TraceCreate(ctx, tr); err != nil {
			return err
		}
		err := s.InTx(ctx, func(tx *Store) error {
			return tx.TraceFinish(ctx, ws, tr.ID, domain.StatusCompleted, domain.TokenUsage{PromptTokens: 10, CompletionTokens: 5}, 0.01,
				domain.Now(), 200+r.Int64N(2000))
		})
		if err != nil {
			return err
		}
		ended = append(ended, tr.ID)
		if i%3 == 2 {
			id := ended[r.IntN(len(ended))]
			if _, err := s.exec(ctx, "UPDATE traces SET duration_ms = duration_ms + $1 WHERE workspace_id = $2 AND id = $3", 1+r.Int64N(500), ws, id); err != nil {
				return err
			}
		}
	}
	return nil
}

// TestTraceRollupPackDown: migration 00038's Down puts the packed counts back into bin rows,
// added to those written since the last pass; Up again and a pass pack them anew.
func TestTraceRollupPackDown(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "a")
		now := time.Now().UTC()
		insertRollupTraces(t, s, ws, rollupTraces(1500, now.Truncate(time.Hour)))
		if _, _, err := s.TraceRollupPack(ctx, 100); err != nil {
			t.Fatal(err)
		}
		if _, err := s.exec(ctx, "UPDATE traces SET duration_ms = duration_ms + 700 WHERE workspace_id = $1 AND started_at % 3 = 0", ws); err != nil {
			t.Fatal(err)
		}
		insertRollupTraces(t, s, ws, rollupTraces(300, now.Truncate(time.Hour)))
		want := exactBins(tracesOf(t, s, ws))

		p, err := s.migrations()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.DownTo(ctx, 37); err != nil {
			t.Fatal(err)
		}
		got := map[binKey]int64{}
		rows, err := s.r.QueryContext(ctx, "SELECT period, period_start, agent_id, bin, count FROM trace_rollup_bins WHERE workspace_id = $1 AND count <> 0", ws)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var k binKey
			var n int64
			must(t, rows.Scan(&k.period, &k.start, &k.agent, &k.bin, &n))
			got[k] = n
		}
		must(t, rows.Err())
		if !maps.Equal(got, want) {
			keys := slices.Collect(maps.Keys(want))
			t.Fatalf("after Down: %d bins, want %d (e.g. %+v: %d, want %d)", len(got), len(want), keys[0], got[keys[0]], want[keys[0]])
		}

		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		checkRollups(t, s, ws, now)
		if _, _, err := s.TraceRollupPack(ctx, 100); err != nil {
			t.Fatal(err)
		}
		checkRollups(t, s, ws, now)
	})
}

// TestTraceRollupBinList: the packed list's parse refuses what a pass never writes, and its
// writer leaves out totals of 0.
func TestTraceRollupBinList(t *testing.T) {
	for _, bad := range []string{"1", "1:", ":1", "a:1", "1:b", "1:2,x", "-2:1", fmt.Sprintf("%d:1", maxBin+1), "1:2:3", "1:2,", "1:-", "1:1234567890123456789"} {
		if err := eachBin([]byte(bad), func(int, int64) {}); err == nil {
			t.Errorf("%q was read", bad)
		}
	}
	var sums binSums
	for _, p := range []struct {
		bin int
		n   int64
	}{{500, 2}, {-1, 1}, {700, 3}, {500, -2}, {600, -1}, {maxBin, 4}} {
		sums.add(p.bin, p.n)
	}
	if got := string(sums.appendList(nil)); got != fmt.Sprintf("-1:1,600:-1,700:3,%d:4", maxBin) {
		t.Fatalf("list %q", got)
	}
}

// packAll is the leader's pass for dbtest.History.Pack.
func packAll(s *Store) func(context.Context) error {
	return func(ctx context.Context) error {
		_, _, err := s.TraceRollupPack(ctx, 100)
		return err
	}
}

// TestTraceRollupFillHistory: the bulk load of tests and benchmarks leaves the rollups as the
// leader's pass does (packed, no bin row left), and the summary read from them exact.
func TestTraceRollupFillHistory(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "a")
		now := time.Now().UTC()
		for _, h := range []dbtest.History{
			{Workspace: ws, Agents: []string{"a1", "a2"}, Runs: 2000, IDPrefix: "a", Start: now.Add(-72 * time.Hour), End: now, Pack: packAll(s)},
			// A second load over some of the same hours adds to their packed rows.
			{Workspace: ws, Agents: []string{"a1"}, Runs: 500, IDPrefix: "b", Start: now.Add(-3 * time.Hour), End: now.Add(-time.Hour), Pack: packAll(s)},
		} {
			if err := dbtest.FillHistory(ctx, s.db, string(s.dialect), h); err != nil {
				t.Fatal(err)
			}
			if n := countRows(t, s, "SELECT count(*) FROM trace_rollup_bins"); n != 0 {
				t.Fatalf("%d bin rows left after the load", n)
			}
			checkRollups(t, s, ws, now)
		}
	})
}

// TestTraceRollupPackTwoPasses: a pass that finds another pass making the same packed row
// waits for it, then adds to what it wrote (PostgreSQL: two leaders for a moment, or the
// leader and a bulk load's pass).
func TestTraceRollupPackTwoPasses(t *testing.T) {
	s := openTestPostgres(t)
	ctx := context.Background()
	ws := mustWorkspace(t, s, "a")
	hour := time.Now().UTC().Truncate(time.Hour)
	mkTrace(t, s, ws, "a1", hour, domain.StatusCompleted, 300, 0, 0, 0)
	bin := rollupMapping.Index(300)

	// The other pass: its packed row of the hour, not committed yet.
	other, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Rollback()
	if _, err := other.ExecContext(ctx, `INSERT INTO trace_rollup_sketches (workspace_id, period, period_start, agent_id, model, bins)
		VALUES ($1, 3600000, $2, 'a1', '', $3)`, ws, hour.UnixMilli(), fmt.Sprintf("%d:2,%d:1", bin, bin+1)); err != nil {
		t.Fatal(err)
	}
	var pid int
	must(t, other.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid))
	done := make(chan error, 1)
	go func() {
		_, _, err := s.TraceRollupPack(ctx, 10)
		done <- err
	}()
	for waiting := 0; waiting == 0; time.Sleep(20 * time.Millisecond) {
		must(t, s.r.QueryRowContext(ctx, "SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))", pid).Scan(&waiting))
	}
	must(t, other.Commit())
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var list string
	must(t, s.r.QueryRowContext(ctx, "SELECT bins FROM trace_rollup_sketches WHERE workspace_id = $1 AND period = 3600000", ws).Scan(&list))
	if want := fmt.Sprintf("%d:3,%d:1", bin, bin+1); list != want {
		t.Fatalf("packed %q, want %q", list, want)
	}
}

// packLeavingNoBins runs a pass listing batch groups at a time and fails unless it left no bin row.
func packLeavingNoBins(t *testing.T, s *Store, batch int) {
	t.Helper()
	if _, _, err := s.TraceRollupPack(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	if left := countRows(t, s, "SELECT count(*) FROM trace_rollup_bins"); left != 0 {
		t.Fatalf("%d bin rows left", left)
	}
}

// TestTraceRollupPercentiles: a pass writes each packed row's percentiles (migration 00041),
// fills in those of rows packed before it, and the summary reads them as they are: a bucket
// of one packed row and no bin row since the pass never parses the row's bins, while a bucket
// with bin rows written since the pass sums them with its packed bins, and so does every
// bucket between the first and the last that need it (a poisoned list shows which are read).
func TestTraceRollupPercentiles(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "a")
		now := time.Now().UTC()
		hour := now.Truncate(time.Hour)
		insertRollupTraces(t, s, ws, rollupTraces(600, hour))
		packLeavingNoBins(t, s, 50)
		if n := countRows(t, s, "SELECT count(*) FROM trace_rollup_sketches WHERE latency_n IS NULL OR (latency_n > 0 AND p50_ms IS NULL)"); n != 0 {
			t.Fatalf("%d packed rows without percentiles", n)
		}
		checkRollups(t, s, ws, now)

		// Rows as migration 00041 leaves them: the next pass fills them in, the same.
		summary := func() []*domain.TraceBucket {
			t.Helper()
			out, err := s.TraceSummary(ctx, ws, domain.Time{Time: hour.Add(-72 * time.Hour)}, domain.Time{Time: hour.Add(time.Hour)}, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		before := summary()
		if _, err := s.exec(ctx, "UPDATE trace_rollup_sketches SET latency_n = NULL, p50_ms = NULL, p95_ms = NULL, p99_ms = NULL"); err != nil {
			t.Fatal(err)
		}
		checkRollups(t, s, ws, now) // from the bins
		groups, bins, err := s.TraceRollupPack(ctx, 7)
		if err != nil {
			t.Fatal(err)
		}
		rowsN := countRows(t, s, "SELECT count(*) FROM trace_rollup_sketches")
		if groups != rowsN || bins != 0 {
			t.Fatalf("the pass wrote %d rows and packed %d bins, want %d and 0", groups, bins, rowsN)
		}
		if n := countRows(t, s, "SELECT count(*) FROM trace_rollup_sketches WHERE latency_n IS NULL"); n != 0 {
			t.Fatalf("%d packed rows left without percentiles", n)
		}
		checkSummary(t, summary(), before)

		// Poison the bins of every hour but the last two: the summary never reads them.
		start := func(i int) int64 { return hour.Add(time.Duration(-i) * time.Hour).UnixMilli() }
		if _, err := s.exec(ctx, "UPDATE trace_rollup_sketches SET bins = 'poison' WHERE workspace_id = $1 AND period = 3600000 AND period_start < $2", ws, start(1)); err != nil {
			t.Fatal(err)
		}
		checkSummary(t, summary(), before)

		// A run ending in the last hour: its bucket sums its bins, the others keep theirs.
		mkTrace(t, s, ws, "agent-a", hour.Add(time.Minute), domain.StatusCompleted, 123456, 1, 1, 0)
		traces := tracesOf(t, s, ws)
		checkSummary(t, summary(), exactSummary(traces, hour.Add(-72*time.Hour), time.Hour))

		// One 5 hours back too: every bucket from there to the last hour is read, and a
		// poisoned list among them is an error.
		mkTrace(t, s, ws, "agent-b", hour.Add(-5*time.Hour+time.Minute), domain.StatusCompleted, 5, 1, 1, 0)
		if _, err := s.TraceSummary(ctx, ws, domain.Time{Time: hour.Add(-72 * time.Hour)}, domain.Time{Time: hour.Add(time.Hour)}, time.Hour); err == nil ||
			!strings.Contains(err.Error(), "poison") {
			t.Fatalf("summary over a poisoned list: %v", err)
		}
	})
}
