package store

import (
	"context"
	"os"
	"testing"

	"github.com/agentplane/agentplane/internal/dbtest"
)

// dbs are the databases migrated once for the whole package, which tests copy: the PostgreSQL
// one (see openTestPostgres), and a SQLite file for tests of file stores that are not about
// creating one.
var dbs = dbtest.NewTemplate(func(ctx context.Context, url string) error {
	s, err := Open(ctx, url)
	if err != nil {
		return err
	}
	return s.Close()
})

// TestMain drops the template database once the tests are done.
func TestMain(m *testing.M) {
	code := m.Run()
	dbs.Drop()
	os.Exit(code)
}
