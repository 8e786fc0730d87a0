package store

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
)

// BenchmarkMemoryMatch: the retrieval a run with config.memory makes before its first model
// call, over 50,000 memories of one workspace spread over 100 end users (500 each), on SQLite
// and, with TEST_DATABASE_URL, PostgreSQL.
//
//	go test ./internal/store -run '^$' -bench MemoryMatch -benchtime 200x
func BenchmarkMemoryMatch(b *testing.B) {
	words := strings.Fields("order refund shipping invoice colour tea coffee dog cat garden train flight hotel music film book " +
		"project deadline budget meeting report account password email phone address birthday allergy doctor school")
	for _, dialect := range []string{"sqlite", "postgres"} {
		b.Run(dialect, func(b *testing.B) {
			s := openBenchStore(b, dialect, b.TempDir()+"/bench.db")
			ctx := context.Background()
			ws := mustWorkspace(b, s, "bench")
			const n = 50_000
			err := s.InTx(ctx, func(tx *Store) error {
				now := domain.Now().UnixMilli()
				for i := 0; i < n; i += 500 {
					var q strings.Builder
					q.WriteString(`INSERT INTO memories (id, workspace_id, end_user_id, key, content, metadata, created_at, updated_at) VALUES `)
					for j := i; j < i+500; j++ {
						if j > i {
							q.WriteString(", ")
						}
						content := fmt.Sprintf("The user mentioned their %s and the %s on day %d.", words[j%len(words)], words[(j/7)%len(words)], j)
						fmt.Fprintf(&q, "('%s', '%s', 'user-%d', '', '%s', '{}', %d, %d)", NewID(), ws, j%100, content, now+int64(j), now+int64(j))
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
			b.ResetTimer()
			for i := range b.N {
				got, err := s.MemoryMatch(ctx, ws, domain.MemoryScope{EndUserID: fmt.Sprintf("user-%d", i%100)}, "When is my flight, and did the hotel send the invoice?", 10)
				if err != nil || len(got) != 10 {
					b.Fatalf("%d memories, %v", len(got), err)
				}
			}
		})
	}
}
