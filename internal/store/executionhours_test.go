package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/dbtest"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/jackc/pgx/v5/pgconn"
)

// hour0 is the start of an hour (Unix ms), from which the tests lay out their runs.
const hour0 = int64(489_923) * hourMS

// hoursBundle is a workspace with an agent, whose runs the tests write with chosen creation
// times, and another workspace beside it.
type hoursBundle struct {
	t         *testing.T
	s         *Store
	ws, other string
	agent     *domain.Agent
	n         int
}

func newHoursBundle(t *testing.T, s *Store) *hoursBundle {
	t.Helper()
	ws, other := mustWorkspace(t, s, "hours"), mustWorkspace(t, s, "other")
	a, err := s.AgentCreate(context.Background(), &domain.Agent{WorkspaceID: ws, Name: "A", Type: "simple", Status: "active"}, &domain.AgentConfig{Model: "gpt-4o"}, "")
	if err != nil {
		t.Fatal(err)
	}
	return &hoursBundle{t: t, s: s, ws: ws, other: other, agent: a}
}

// insert writes a finished run of ws created at each of times (Unix ms).
func (b *hoursBundle) insert(ws string, times ...int64) {
	b.t.Helper()
	for _, at := range times {
		b.n++
		id := fmt.Sprintf("x%05d", b.n)
		if _, err := b.s.exec(context.Background(), `INSERT INTO executions (id, workspace_id, agent_id, root_id, source, status, trace_id, created_at, updated_at)
			VALUES ($1, $2, $3, '', 'api', 'completed', $4, $5, $5)`, id, ws, b.agent.ID, "t"+id, at); err != nil {
			b.t.Fatal(err)
		}
	}
}

// spread is count times evenly spread over hour h after hour0, its first and last
// millisecond included.
func spread(h, count int) []int64 {
	start := hour0 + int64(h)*hourMS
	out := make([]int64, count)
	for i := range out {
		out[i] = start + int64(i)*(hourMS-1)/int64(max(count-1, 1))
	}
	return out
}

// history writes runs of ws over several hours: uneven counts, an empty hour, runs on the
// first and last millisecond of an hour, and runs created in the same millisecond (their ids
// break the tie); and a few runs of the other workspace in between.
func (b *hoursBundle) history() {
	b.t.Helper()
	for h, count := range []int{5, 0, 12, 1, 9, 0, 0, 3} {
		b.insert(b.ws, spread(h, count)...)
	}
	mid := hour0 + 2*hourMS + hourMS/2
	b.insert(b.ws, mid, mid, mid)
	b.insert(b.other, spread(2, 4)...)
	b.insert(b.other, spread(3, 2)...)
}

// checkPages compares every page of the whole list of ws (several page sizes, up to two
// pages past the end) with the plain OFFSET query.
func (b *hoursBundle) checkPages(ws string) {
	b.t.Helper()
	ctx := context.Background()
	var total int
	if err := b.s.r.QueryRowContext(ctx, "SELECT count(*) FROM executions WHERE workspace_id = $1", ws).Scan(&total); err != nil {
		b.t.Fatal(err)
	}
	for _, limit := range []int{1, 4, 7, 20} {
		for page := 1; (page-2)*limit < total; page++ {
			want, err := b.s.strings(ctx, fmt.Sprintf("SELECT id FROM executions WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC LIMIT %d OFFSET %d",
				limit, (page-1)*limit), ws)
			if err != nil {
				b.t.Fatal(err)
			}
			items, _, err := b.s.ExecutionList(ctx, ws, domain.ExecutionFilter{}, domain.Page{Page: page, Limit: limit})
			if err != nil {
				b.t.Fatal(err)
			}
			got := []string{}
			for _, x := range items {
				got = append(got, x.ID)
			}
			if !slices.Equal(got, want) {
				b.t.Fatalf("page %d of %d (%d runs): %v, want %v", page, limit, total, got, want)
			}
		}
	}
}

// checkHourCounts fails unless execution_hours holds, for every workspace and hour, the
// number of its executions, and no row counts none.
func checkHourCounts(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	counts := func(q string) map[string]int {
		rows, err := s.r.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		m := map[string]int{}
		for rows.Next() {
			var ws string
			var hour int64
			var n int
			if err := rows.Scan(&ws, &hour, &n); err != nil {
				t.Fatal(err)
			}
			m[fmt.Sprintf("%s %d", ws, hour)] = n
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return m
	}
	got := counts("SELECT workspace_id, hour, CAST(sum(n) AS BIGINT) FROM execution_hours GROUP BY workspace_id, hour")
	want := counts("SELECT workspace_id, created_at / 3600000 * 3600000, count(*) FROM executions GROUP BY 1, 2")
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("runs per hour:\n%v\nwant (count of executions)\n%v", got, want)
	}
	var empty int
	if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM execution_hours WHERE n <= 0").Scan(&empty); err != nil || empty != 0 {
		t.Fatalf("%d rows of execution_hours count no run (%v)", empty, err)
	}
}

// TestExecutionHoursPages: a deep page of the whole list of executions, which skips hours by
// their counts, is the page the plain OFFSET query reads, for every page and size over runs
// spread across hours, and stays so as runs are deleted: by retention (an hour whole and one
// in part), with their agent (the runs stay), and with another workspace.
func TestExecutionHoursPages(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		b := newHoursBundle(t, s)
		b.history()
		checkHourCounts(t, s)
		b.checkPages(b.ws)
		b.checkPages(b.other)

		t.Run("retention", func(t *testing.T) {
			if _, err := s.ExecutionsPurge(ctx, b.ws, time.UnixMilli(hour0+2*hourMS+hourMS/2+1), 1000); err != nil {
				t.Fatal(err)
			}
			var left int
			if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM executions WHERE workspace_id = $1 AND created_at < $2", b.ws, hour0+2*hourMS).Scan(&left); err != nil || left != 0 {
				t.Fatalf("%d runs of the first hours left (%v)", left, err)
			}
			checkHourCounts(t, s)
			b.checkPages(b.ws)
			b.checkPages(b.other)
		})
		t.Run("agent deleted", func(t *testing.T) {
			if _, err := s.AgentDelete(ctx, b.ws, b.agent.ID); err != nil {
				t.Fatal(err)
			}
			checkHourCounts(t, s)
			b.checkPages(b.ws)
		})
		t.Run("workspace deleted", func(t *testing.T) {
			if _, err := s.WorkspaceDelete(ctx, b.other); err != nil {
				t.Fatal(err)
			}
			for done := false; !done; {
				var err error
				if _, done, err = s.WorkspacePurge(ctx, b.other, 2); err != nil {
					t.Fatal(err)
				}
			}
			checkHourCounts(t, s)
			b.checkPages(b.ws)
		})
		t.Run("all deleted", func(t *testing.T) {
			if _, err := s.exec(ctx, "DELETE FROM executions WHERE workspace_id = $1", b.ws); err != nil {
				t.Fatal(err)
			}
			checkHourCounts(t, s)
			items, _, err := s.ExecutionList(ctx, b.ws, domain.ExecutionFilter{}, domain.Page{Page: 2, Limit: 5})
			if err != nil || len(items) != 0 {
				t.Fatalf("page 2 of no runs: %d, %v", len(items), err)
			}
		})
	})
}

// TestExecutionHoursConcurrentInserts: runs created at once by many callers (on PostgreSQL,
// into the same hour's rows) are each counted once.
func TestExecutionHoursConcurrentInserts(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		b := newHoursBundle(t, s)
		const callers, runs = 8, 15
		var wg sync.WaitGroup
		errs := make(chan error, callers*runs)
		for range callers {
			wg.Go(func() {
				for range runs {
					x := &domain.Execution{WorkspaceID: b.ws, AgentID: b.agent.ID, Source: "api", Status: domain.StatusPending,
						Input: domain.JSONObject{}, Metadata: domain.JSONObject{}, TimeoutMS: 1000}
					x.ID = NewID()
					errs <- s.ExecutionCreate(ctx, x, &domain.Trace{WorkspaceID: b.ws, AgentID: &b.agent.ID, Name: "A"})
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		checkHourCounts(t, s)
		var n int
		if err := s.r.QueryRowContext(ctx, "SELECT CAST(sum(n) AS BIGINT) FROM execution_hours WHERE workspace_id = $1", b.ws).Scan(&n); err != nil || n != callers*runs {
			t.Fatalf("%d runs counted, want %d (%v)", n, callers*runs, err)
		}
	})
}

// TestExecutionHoursMigration: migration 00037 counts the runs already stored, and the
// counts it writes are the ones the triggers then decrement (on PostgreSQL, in the same
// shards).
func TestExecutionHoursMigration(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		b := newHoursBundle(t, s)
		p, err := s.migrations()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.DownTo(ctx, 36); err != nil {
			t.Fatal(err)
		}
		b.history()
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		checkHourCounts(t, s)
		b.checkPages(b.ws)
		if _, err := s.exec(ctx, "DELETE FROM executions WHERE created_at < $1", hour0+3*hourMS); err != nil {
			t.Fatal(err)
		}
		checkHourCounts(t, s)
		b.checkPages(b.ws)
	})
}

// TestExecutionHoursFillHistory: the bulk load of tests and benchmarks leaves the runs per
// hour right, with the triggers and (on PostgreSQL) without them.
func TestExecutionHoursFillHistory(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		b := newHoursBundle(t, s)
		now := time.UnixMilli(hour0)
		for _, h := range []dbtest.History{
			{Workspace: b.ws, Agents: []string{b.agent.ID}, Runs: 300, IDPrefix: "a", Start: now.Add(-20 * time.Hour), End: now},
			{Workspace: b.ws, Agents: []string{b.agent.ID}, Runs: 200, IDPrefix: "b", SkipTriggers: true, Start: now.Add(-30 * time.Hour), End: now.Add(-10 * time.Hour)},
		} {
			if err := dbtest.FillHistory(ctx, s.db, string(s.dialect), h); err != nil {
				t.Fatal(err)
			}
		}
		checkHourCounts(t, s)
		items, _, err := s.ExecutionList(ctx, b.ws, domain.ExecutionFilter{}, domain.Page{Page: 20, Limit: 20})
		if err != nil || len(items) != 20 {
			t.Fatalf("page 20: %d runs, %v", len(items), err)
		}
	})
}

// TestExecutionHoursPlans: a deep page reads the hours of its own workspace on the primary
// key, never the counts of every workspace (here another one with 100,000 hours).
func TestExecutionHoursPlans(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		b := newHoursBundle(t, s)
		b.history()
		// Another workspace's 100,000 count rows on PostgreSQL (the size for its plan
		// checks); 10,000 on SQLite, whose planner weighs the ANALYZE statistics alike at
		// either size (a smaller table only makes a scan more tempting), and whose insert of
		// 100,000 took 25 s under -race.
		rows := 100_000
		if s.dialect == SQLite {
			rows = 10_000
		}
		if _, err := s.exec(ctx, `WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < $2)
			INSERT INTO execution_hours (workspace_id, hour, shard, n) SELECT $1, CAST(i AS BIGINT) * 3600000, 0, 1 FROM g`, b.other, rows); err != nil {
			t.Fatal(err)
		}
		if _, err := s.exec(ctx, "ANALYZE"); err != nil {
			t.Fatal(err)
		}
		rec := &recorder{dbtx: s.r}
		s.r = rec
		if _, _, err := s.ExecutionList(ctx, b.ws, domain.ExecutionFilter{}, domain.Page{Page: 3, Limit: 5}); err != nil {
			t.Fatal(err)
		}
		scans := sqliteScans
		if s.dialect == Postgres {
			scans = pgSeqScans
		}
		for _, q := range rec.queries {
			if found := scans(t, s.db, q, map[string]bool{"execution_hours": true}); len(found) > 0 {
				t.Errorf("scan of %v in\n%s", found, q.sql)
			}
		}
	})
}

// TestExecutionHoursConcurrentDeletes (PostgreSQL): a delete of runs locks the count rows of
// their hours in key order (migration 00039), so deletes over the same hours wait for each
// other rather than deadlock. Held up on one row, a delete holds every row before it and none
// after it; and deletes running at once over the same hours, each of its own runs, all
// succeed and leave the counts exact.
func TestExecutionHoursConcurrentDeletes(t *testing.T) {
	s := openTestPostgres(t)
	ctx := context.Background()
	b := newHoursBundle(t, s)
	const hours, perHour = 12, 8
	for h := range hours {
		b.insert(b.ws, spread(h, perHour)...)
	}

	t.Run("lock order", func(t *testing.T) {
		keys := hourKeys(t, s, b.ws)
		mid := len(keys) / 2
		blocker, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer blocker.Rollback()
		if _, err := blocker.ExecContext(ctx, "SELECT 1 FROM execution_hours WHERE workspace_id = $1 AND hour = $2 AND shard = $3 FOR UPDATE",
			b.ws, keys[mid].hour, keys[mid].shard); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := s.exec(ctx, "DELETE FROM executions WHERE workspace_id = $1", b.ws)
			done <- err
		}()
		waitForLockWait(t, s, "DELETE FROM executions")
		for i, k := range keys {
			if i == mid {
				continue
			}
			if locked, want := hourRowLocked(t, s, b.ws, k), i < mid; locked != want {
				t.Errorf("count row %d of %d (hour %d, shard %d) locked: %v, want %v (the delete waits on row %d)", i, len(keys), k.hour, k.shard, locked, want, mid)
			}
		}
		if err := blocker.Rollback(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		checkHourCounts(t, s)
	})

	t.Run("at once", func(t *testing.T) {
		const deleters, rounds = 4, 5
		for range rounds {
			first := b.n + 1
			for h := range hours {
				b.insert(b.ws, spread(h, perHour)...)
			}
			// Deleter d deletes every deleters-th run, in one statement over every hour.
			var wg sync.WaitGroup
			errs := make(chan error, deleters)
			for d := range deleters {
				var ids []string
				for n := first + d; n <= b.n; n += deleters {
					ids = append(ids, fmt.Sprintf("x%05d", n))
				}
				wg.Go(func() {
					_, err := s.exec(ctx, "DELETE FROM executions WHERE workspace_id = $1 AND id = ANY($2)", b.ws, ids)
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			checkHourCounts(t, s)
		}
	})
}

type hourKey struct {
	hour  int64
	shard int
}

// hourKeys returns the keys of the count rows of ws, in key order.
func hourKeys(t *testing.T, s *Store, ws string) []hourKey {
	t.Helper()
	rows, err := s.db.QueryContext(context.Background(), "SELECT hour, shard FROM execution_hours WHERE workspace_id = $1 ORDER BY hour, shard", ws)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var keys []hourKey
	for rows.Next() {
		var k hourKey
		if err := rows.Scan(&k.hour, &k.shard); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(keys) < 3 {
		t.Fatalf("%d count rows; the test needs a few", len(keys))
	}
	return keys
}

// waitForLockWait waits until a statement of the test's database starting with prefix waits
// for a lock.
func waitForLockWait(t *testing.T, s *Store, prefix string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var waiting int
		if err := s.db.QueryRowContext(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND starts_with(query, $1)`, prefix).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q waits for a lock after 30 s", prefix)
		}
	}
}

// hourRowLocked reports whether another transaction holds the count row k of ws.
func hourRowLocked(t *testing.T, s *Store, ws string, k hourKey) bool {
	t.Helper()
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, "SELECT 1 FROM execution_hours WHERE workspace_id = $1 AND hour = $2 AND shard = $3 FOR UPDATE NOWAIT", ws, k.hour, k.shard)
	var pg *pgconn.PgError
	switch {
	case err == nil:
		return false
	case errors.As(err, &pg) && pg.Code == "55P03": // lock_not_available
		return true
	}
	t.Fatal(err)
	return false
}
