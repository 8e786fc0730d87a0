package store

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
)

// TestSQLiteStatementReuse: a statement kept by a connection runs again while rows of its
// previous execution are still open (a nested loop over the same query), and a connection
// keeps at most maxConnStmts statements.
func TestSQLiteStatementReuse(t *testing.T) {
	s, err := Open(context.Background(), "memory")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for _, slug := range []string{"a", "b", "c"} {
		mustWorkspace(t, s, slug)
	}
	const q = "SELECT slug FROM workspaces WHERE slug >= $1 ORDER BY slug"
	err = s.InTx(ctx, func(tx *Store) error {
		outer, err := tx.r.QueryContext(ctx, q, "a")
		if err != nil {
			return err
		}
		defer outer.Close()
		var pairs []string
		for outer.Next() {
			var o string
			if err := outer.Scan(&o); err != nil {
				return err
			}
			inner, err := tx.r.QueryContext(ctx, q, o)
			if err != nil {
				return err
			}
			for inner.Next() {
				var i string
				if err := inner.Scan(&i); err != nil {
					return err
				}
				pairs = append(pairs, o+i)
			}
			if err := inner.Close(); err != nil {
				return err
			}
		}
		if got := fmt.Sprint(pairs); got != "[aa ab ac bb bc cc]" {
			t.Errorf("nested reads of one statement: %s", got)
		}
		return outer.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range maxConnStmts + 20 {
		var n int
		if err := s.r.QueryRowContext(ctx, fmt.Sprintf("SELECT %d + $1", i), 1).Scan(&n); err != nil || n != i+1 {
			t.Fatalf("query %d: %d %v", i, n, err)
		}
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.Raw(func(dc any) error {
		c := dc.(*stmtConn)
		if len(c.stmts) > maxConnStmts || c.lru.Len() != len(c.stmts) {
			t.Errorf("connection keeps %d statements (%d in its list), bound %d", len(c.stmts), c.lru.Len(), maxConnStmts)
		}
		return nil
	})
}

// TestSQLiteTempStoreInMemory: the connections of a SQLite file keep temporary storage, the
// writer's savepoint journal among it, in memory (see openSQLite), and still do after Migrate,
// which uses files for its own sorts.
func TestSQLiteTempStoreInMemory(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir()+"/agentplane.db")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for name, db := range map[string]*sql.DB{"writer": s.wdb, "reader": s.db} {
		var mode int
		if err := db.QueryRowContext(ctx, "PRAGMA temp_store").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if mode != 2 { // 2 is MEMORY
			t.Errorf("%s connection: temp_store %d, want 2 (memory)", name, mode)
		}
	}
}
