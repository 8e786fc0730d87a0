package store

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// BenchmarkTraceSummary: GET /traces/summary's query over 100,000 runs of one workspace (20
// agents, spread over the last 30 days, 5% failed, 1% still running), for the 30-day window
// by day (every run) and the 24-hour window by hour, on SQLite and, with TEST_DATABASE_URL,
// PostgreSQL.
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
			ws := mustWorkspace(b, s, "bench")
			const n = 100_000
			now := time.Now().UTC()
			span := 30 * 24 * time.Hour
			err := s.InTx(ctx, func(tx *Store) error {
				for i := 0; i < n; i += 500 {
					var q strings.Builder
					q.WriteString(`INSERT INTO traces (id, workspace_id, agent_id, name, status, prompt_tokens, completion_tokens, cost,
						duration_ms, started_at, ended_at, created_at) VALUES `)
					for j := i; j < i+500; j++ {
						if j > i {
							q.WriteString(", ")
						}
						start := now.Add(-span + time.Duration(int64(span)/n*int64(j))).UnixMilli()
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
						fmt.Fprintf(&q, "('%s', '%s', 'agent-%d', 'run', '%s', %d, %d, %g, %s, %d, %s, %d)", NewID(), ws, j%20, status,
							100+j%900, 10+j%90, float64(j%1000)/1e5, dur, start, ended, start)
					}
					if _, err := tx.exec(ctx, q.String()); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			if s.dialect == Postgres {
				if _, err := s.exec(ctx, "VACUUM ANALYZE traces"); err != nil { // as autovacuum leaves an insert-only table
					b.Fatal(err)
				}
			} else if _, err := s.exec(ctx, "ANALYZE"); err != nil {
				b.Fatal(err)
			}
			for _, c := range []struct {
				name           string
				window, bucket time.Duration
				runs           int64
			}{{"30d-by-day", span + time.Hour, 24 * time.Hour, n}, {"24h-by-hour", 24 * time.Hour, time.Hour, 0}} {
				b.Run(c.name, func(b *testing.B) {
					for b.Loop() {
						to := Time{time.Now().UTC()}
						rows, err := s.TraceSummary(ctx, ws, Time{to.Add(-c.window)}, to, c.bucket)
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
