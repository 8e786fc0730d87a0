package retention

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/dbtest"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/store/storetest"
)

// historyRelations are the tables expiry empties, each measured with its indexes and TOAST.
var historyRelations = []string{"executions", "traces", "spans", "execution_events", "scores"}

// TestSpaceComesBack (PostgreSQL): the space of expired history comes back. Expiry deletes
// rows (no partitions are dropped): a plain VACUUM (what autovacuum runs) after the purge
// frees the pages of the deleted rows, and returns the empty ones at a table's end to the
// operating system; a new history of the same size then takes no more room than the first.
// It asserts on the tables (heap and TOAST) and logs the indexes: an index page emptied by
// the purge is reused only once VACUUM can recycle it, which on PostgreSQL 15 waits for every
// older transaction of the server, not under the test's control on a shared server. It runs in
// a database of its own: VACUUM frees only rows older than every open transaction of the
// database, and other tests (in other schemas of TEST_DATABASE_URL's database) hold some open.
func TestSpaceComesBack(t *testing.T) {
	ctx := context.Background()
	u := dbtest.PostgresDatabaseURL(t)
	st := storetest.Open(t, u)
	db, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ws, err := st.WorkspaceCreate(ctx, &domain.Workspace{Name: "space", Slug: "space-" + strings.ToLower(store.NewID()), RetentionDays: 7})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	fill := func(prefix string, end time.Time) {
		t.Helper()
		h := dbtest.History{Workspace: ws.ID, Agents: []string{"agent-a", "agent-b"}, Runs: 3000, IDPrefix: prefix, Start: end.Add(-24 * time.Hour), End: end}
		if err := dbtest.FillHistory(ctx, db, "postgres", h); err != nil {
			t.Fatal(err)
		}
	}
	// size vacuums the history tables and returns the bytes of their heaps and TOAST.
	size := func(when string) int64 {
		t.Helper()
		if _, err := db.ExecContext(ctx, "VACUUM "+strings.Join(historyRelations, ", ")); err != nil {
			t.Fatal(err)
		}
		var tables, indexes int64
		for _, r := range historyRelations {
			var heap, idx int64
			if err := db.QueryRowContext(ctx, "SELECT pg_table_size($1::regclass), pg_indexes_size($1::regclass)", r).Scan(&heap, &idx); err != nil {
				t.Fatal(err)
			}
			tables, indexes = tables+heap, indexes+idx
		}
		t.Logf("%s: tables %d KB, indexes %d KB", when, tables/1024, indexes/1024)
		return tables
	}

	fill("a", now.Add(-30*24*time.Hour)) // expired
	full := size("3,000 expired runs")
	r, err := New(Config{Store: st}).Pass(ctx)
	if err != nil || r.Executions != 3000 {
		t.Fatalf("purge: %+v %v", r, err)
	}
	if freed := size("after the purge"); freed > full/10 {
		t.Errorf("the tables hold %d KB after the purge and VACUUM, of %d KB", freed/1024, full/1024)
	}
	fill("b", now) // kept
	if after := size("3,000 new runs"); after > full+full/10 {
		t.Errorf("the tables grew from %d KB to %d KB: the expired rows' space was not reused", full/1024, after/1024)
	}
}
