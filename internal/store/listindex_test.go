package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/dbtest"
)

// TestListIndexesStayDense: runs written oldest first, as a server writes them, leave the
// SQLite indexes of the executions list nearly full (migration 00033: ascending, scanned
// backward), where a descending index took every new row at the start of its group and ended
// half empty, doubling the pages a deep page or a count reads: over 2,000 runs about 80 bytes
// per run of each index ascending, 135 descending (4,000 runs tell them apart no better, at
// twice the cost under -race). (PostgreSQL splits a page in halves unless it is the last
// of the index, whatever the order: only the last group of an index gains there.)
func TestListIndexesStayDense(t *testing.T) {
	const runs, maxBytesPerRun = 2_000, 120
	s, err := Open(context.Background(), "file:"+dbs.SQLiteFile(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	fillInOrder(t, s, runs)
	for _, name := range []string{"executions_ws_created", "executions_agent", "executions_status", "executions_source"} {
		var size int64
		err := s.db.QueryRowContext(context.Background(), "SELECT sum(pgsize) FROM dbstat WHERE name = $1", name).Scan(&size)
		if err != nil {
			t.Fatal(err)
		}
		if perRun := size / runs; perRun > maxBytesPerRun {
			t.Errorf("%s: %d bytes per run, want at most %d", name, perRun, maxBytesPerRun)
		}
	}
}

// fillInOrder writes runs finished runs of one workspace, oldest first.
func fillInOrder(t *testing.T, s *Store, runs int) {
	t.Helper()
	ws := mustWorkspace(t, s, "dense")
	now := time.Now()
	err := dbtest.FillHistory(context.Background(), s.db, string(s.dialect), dbtest.History{Workspace: ws, Agents: []string{"a1", "a2"},
		Runs: runs, IDPrefix: "d", SkipTriggers: true, Start: now.Add(-24 * time.Hour), End: now})
	if err != nil {
		t.Fatal(fmt.Errorf("fill: %w", err))
	}
}
