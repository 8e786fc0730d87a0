// Package storetest gives the tests of the packages built on the store databases migrated
// once per test binary, to copy per test (see dbtest.Template).
package storetest

import (
	"context"

	"github.com/agentplane/agentplane/internal/dbtest"
	"github.com/agentplane/agentplane/internal/store"
)

// NewTemplate returns a template migrated with the store's migrations, as store.Open leaves a
// new database. The package's TestMain calls its Drop.
func NewTemplate() *dbtest.Template {
	return dbtest.NewTemplate(func(ctx context.Context, url string) error {
		st, err := store.Open(ctx, url)
		if err != nil {
			return err
		}
		return st.Close()
	})
}
