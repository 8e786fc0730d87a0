package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// BenchmarkExecutionsPurge: one purge transaction of DefaultBatch-sized work (500 ended runs,
// each with a frame batch of 4 KiB, a trace with 3 spans and a score), on a SQLite file and,
// with TEST_DATABASE_URL, PostgreSQL: how long the purge holds its transaction (and, on
// SQLite, the one writer).
//
//	go test ./internal/store -run '^$' -bench ExecutionsPurge -benchtime 5x
func BenchmarkExecutionsPurge(b *testing.B) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		b.Run(dialect, func(b *testing.B) {
			s := openBenchStore(b, dialect, b.TempDir()+"/bench.db")
			ctx := context.Background()
			ws := mustWorkspace(b, s, "bench")
			frame := `[{"seq":1,"event":"content","data":{"content":"` + strings.Repeat("x", 4096) + `"}}]`
			for range b.N {
				b.StopTimer()
				if err := s.InTx(ctx, func(tx *Store) error { return benchRuns(ctx, tx, ws, 500, frame) }); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				c, err := s.ExecutionsPurge(ctx, ws, time.Now().Add(time.Hour), 500)
				if err != nil || c.Executions != 500 || c.Spans != 1500 {
					b.Fatalf("purge: %+v %v", c, err)
				}
			}
		})
	}
}

// benchRuns inserts n completed runs of ws with their frames, trace, spans and a score.
func benchRuns(ctx context.Context, tx *Store, ws string, n int, frame string) error {
	now := domain.Now().UnixMilli() - 1000
	for range n {
		id, tr := NewID(), NewID()
		steps := []struct {
			q    string
			args []any
		}{
			{`INSERT INTO executions (id, workspace_id, agent_id, root_id, source, status, trace_id, created_at, updated_at)
				VALUES ($1, $2, 'agent', $1, 'api', 'completed', $3, $4, $4)`, []any{id, ws, tr, now}},
			{"INSERT INTO execution_events (execution_id, seq_from, seq_to, frames) VALUES ($1, 1, 1, $2)", []any{id, frame}},
			{`INSERT INTO traces (id, workspace_id, execution_id, name, status, started_at, created_at) VALUES ($1, $2, $3, 'a', 'completed', $4, $4)`,
				[]any{tr, ws, id, now}},
			{`INSERT INTO scores (id, workspace_id, name, data_type, value, execution_id, trace_id, source, created_at, updated_at)
				VALUES ($1, $2, 's', 'numeric', 1, $3, $4, 'api', $5, $5)`, []any{NewID(), ws, id, tr, now}},
		}
		for k := range 3 {
			steps = append(steps, struct {
				q    string
				args []any
			}{`INSERT INTO spans (workspace_id, trace_id, id, name, kind, status, started_at) VALUES ($1, $2, $3, 'llm', 'llm', 'ok', $4)`,
				[]any{ws, tr, fmt.Sprintf("s%d", k), now}})
		}
		for _, st := range steps {
			if _, err := tx.exec(ctx, st.q, st.args...); err != nil {
				return err
			}
		}
	}
	return nil
}
