package store

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
)

// BenchmarkScoreSummary: GET /scores/summary's queries over 100,000 scores of one workspace
// (a numeric name with many values, a 1-5 rating, a categorical and a boolean name), on
// SQLite and, with TEST_DATABASE_URL, PostgreSQL.
//
//	go test ./internal/store -run '^$' -bench ScoreSummary -benchtime 20x
func BenchmarkScoreSummary(b *testing.B) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		b.Run(dialect, func(b *testing.B) {
			s := openBenchStore(b, dialect, b.TempDir()+"/bench.db")
			ctx := context.Background()
			ws := mustWorkspace(b, s, "bench")
			const n = 100_000
			err := s.InTx(ctx, func(tx *Store) error {
				now := domain.Now()
				for i := 0; i < n; i += 500 {
					var q strings.Builder
					q.WriteString(`INSERT INTO scores (id, workspace_id, name, data_type, value, string_value, execution_id, source, created_at, updated_at) VALUES `)
					for j := i; j < i+500; j++ {
						if j > i {
							q.WriteString(", ")
						}
						name, typ, value, label := "latency", domain.ScoreNumeric, fmt.Sprint(j%997), "NULL"
						switch j % 4 {
						case 1:
							name, value = "rating", fmt.Sprint(1+j%5)
						case 2:
							name, typ, value, label = "verdict", domain.ScoreCategorical, fmt.Sprint(j%3), fmt.Sprintf("'label %d'", j%3)
						case 3:
							name, typ, value, label = "resolved", domain.ScoreBoolean, fmt.Sprint(j%2), "'true'"
						}
						fmt.Fprintf(&q, "('%s', '%s', '%s', '%s', %s, %s, 'x%d', 'api', %d, %d)", NewID(), ws, name, typ, value, label, j%1000,
							now.UnixMilli()+int64(j), now.UnixMilli())
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
				if _, err := s.exec(ctx, "VACUUM ANALYZE scores"); err != nil { // as autovacuum leaves an insert-only table
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for b.Loop() {
				items, total, err := s.ScoreSummary(ctx, ws, domain.ScoreFilter{}, domain.Page{Page: 1, Limit: 20})
				if err != nil || total != 4 || items[0].Count != n/4 {
					b.Fatalf("summary: %d groups, %v", total, err)
				}
			}
		})
	}
}
