package storetest

import (
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentplane/agentplane/internal/dbtest"
	"github.com/agentplane/agentplane/internal/store"
)

// NewTemplate returns a template migrated with the store's migrations, as store.Open leaves a
// new database. The package's TestMain hands it to Main.
func NewTemplate() *dbtest.Template {
	return dbtest.NewTemplate(func(ctx context.Context, url string) error {
		st, err := store.Open(ctx, url)
		if err != nil {
			return err
		}
		return st.Close()
	})
}

// Main is a TestMain: it runs the tests, drops the databases of dbs, then fails the run if a
// goroutine is left behind (goleak.Find with opts), as goleak.VerifyTestMain does, whose
// Cleanup would run only after that check, while the copies are still being dropped.
func Main(m *testing.M, dbs *dbtest.Template, opts ...goleak.Option) {
	code := m.Run()
	dbs.Drop()
	if code == 0 {
		if err := goleak.Find(opts...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: Errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
