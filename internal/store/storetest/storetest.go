// Package storetest gives the tests of other packages a store of their own: on in-memory
// SQLite (Memory), or a copy of a database migrated once per test binary (NewTemplate, see
// dbtest.Template). The store's own tests cannot use it: it imports the store.
package storetest

import (
	"context"
	"testing"

	"github.com/agentplane/agentplane/internal/dbtest"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// Memory returns a store on a fresh in-memory SQLite database, closed when the test ends.
func Memory(t testing.TB) *store.Store {
	t.Helper()
	return Open(t, "memory")
}

// Open returns a store on url, closed when the test ends; it skips the test when url is ""
// (the PostgreSQL URLs of dbtest are "" without TEST_DATABASE_URL).
func Open(t testing.TB, url string) *store.Store {
	t.Helper()
	if url == "" {
		t.Skip(dbtest.SkipMessage)
	}
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Workspace creates ws in st; the test fails if it cannot.
func Workspace(t testing.TB, st *store.Store, ws *domain.Workspace) {
	t.Helper()
	if _, err := st.WorkspaceCreate(context.Background(), ws); err != nil {
		t.Fatal(err)
	}
}

// ForEach runs fn on a store on in-memory SQLite and, with TEST_DATABASE_URL, on a copy of
// dbs's migrated PostgreSQL database, each closed when its subtest ends.
func ForEach(t *testing.T, dbs *dbtest.Template, fn func(t *testing.T, st *store.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		fn(t, Memory(t))
	})
	t.Run("postgres", func(t *testing.T) {
		fn(t, Open(t, dbs.URL(t)))
	})
}
