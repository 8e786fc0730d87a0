package seed

import (
	"testing"

	"github.com/agentplane/agentplane/internal/store/storetest"
)

// dbs is the migrated SQLite file the tests of the seed tools copy.
var dbs = storetest.NewTemplate()

// TestMain checks that no test leaves a goroutine behind: every sample database is closed.
func TestMain(m *testing.M) {
	storetest.Main(m, dbs)
}
