package store

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// BenchmarkTraceSummary: GET /traces/summary's queries (of the rollups the traces' triggers
// keep) over two workspaces of 100,000 runs each (durations 200 ms to 5.2 s, 5% failed, 1%
// still running): "spread" has 20 agents over the last 30 days, read for 30 days by day
// (every run) and 24 hours by hour; "dense" has 2 agents over the last 24 hours, read by hour.
// The rollups' rows grow with agents and buckets, not with runs: the leader's pass (run
// after the load) packs the distinct duration bins of an agent's period (at most ~330 for this
// spread of durations) into one row.
// SQLite and, with TEST_DATABASE_URL, PostgreSQL.
//
//	go test ./internal/store -run '^$' -bench TraceSummary -benchtime 20x
func BenchmarkTraceSummary(b *testing.B) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		b.Run(dialect, func(b *testing.B) {
			path := b.TempDir() + "/bench.db"
			if keep := os.Getenv("BENCH_KEEP"); keep != "" {
				path = keep
			}
			s := openBenchStore(b, dialect, path)
			ctx := context.Background()
			const n = 100_000
			now := time.Now().UTC()
			spread, dense := mustWorkspace(b, s, "spread"), mustWorkspace(b, s, "dense")
			insertBenchTraces(b, s, spread, n, now, 30*24*time.Hour, 20)
			insertBenchTraces(b, s, dense, n, now, 24*time.Hour, 2)
			if _, _, err := s.TraceRollupPack(ctx, 100); err != nil { // as the leader's pass leaves them
				b.Fatal(err)
			}
			if s.dialect == Postgres {
				if _, err := s.exec(ctx, "VACUUM ANALYZE traces, trace_rollups, trace_rollup_bins, trace_rollup_sketches"); err != nil { // as autovacuum leaves an insert-only table
					b.Fatal(err)
				}
			} else if _, err := s.exec(ctx, "ANALYZE"); err != nil {
				b.Fatal(err)
			}
			for _, c := range []struct {
				name           string
				ws             string
				window, bucket time.Duration
				runs           int64
			}{{"30d-by-day", spread, 31 * 24 * time.Hour, 24 * time.Hour, n}, {"24h-by-hour", spread, 24 * time.Hour, time.Hour, 0},
				{"dense-24h-by-hour", dense, 25 * time.Hour, time.Hour, n}} {
				b.Run(c.name, func(b *testing.B) {
					for b.Loop() {
						to := domain.Time{Time: time.Now().UTC()}
						rows, err := s.TraceSummary(ctx, c.ws, domain.Time{Time: to.Add(-c.window)}, to, c.bucket)
						if err != nil || len(rows) == 0 {
							b.Fatalf("summary: %d rows, %v", len(rows), err)
						}
						if c.runs > 0 {
							var runs int64
							for _, r := range rows {
								runs += r.Runs
							}
							if runs != c.runs {
								b.Fatalf("summary counted %d runs, want %d", runs, c.runs)
							}
						}
					}
				})
			}
		})
	}
}

// insertBenchTraces stores n runs of the workspace started evenly over the span before now,
// spread over agents agents.
func insertBenchTraces(b *testing.B, s *Store, ws string, n int, now time.Time, span time.Duration, agents int) {
	err := s.InTx(context.Background(), func(tx *Store) error {
		for i := 0; i < n; i += 500 {
			var q strings.Builder
			q.WriteString(`INSERT INTO traces (id, workspace_id, agent_id, name, status, prompt_tokens, completion_tokens, cost,
				duration_ms, started_at, ended_at, created_at) VALUES `)
			for j := i; j < i+500; j++ {
				if j > i {
					q.WriteString(", ")
				}
				start := now.Add(-span + time.Duration(int64(span)/int64(n)*int64(j))).UnixMilli()
				status, dur, ended := "completed", fmt.Sprint(200+(j*7919)%5000), ""
				switch {
				case j%100 == 0:
					status, dur = "running", "NULL"
				case j%20 == 1:
					status = "failed"
				}
				if dur == "NULL" {
					ended = "NULL"
				} else {
					ended = fmt.Sprint(start + int64(200+(j*7919)%5000))
				}
				fmt.Fprintf(&q, "('%s', '%s', 'agent-%d', 'run', '%s', %d, %d, %g, %s, %d, %s, %d)", NewID(), ws, j%agents, status,
					100+j%900, 10+j%90, float64(j%1000)/1e5, dur, start, ended, start)
			}
			if _, err := tx.exec(context.Background(), q.String()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
