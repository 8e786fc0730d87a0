package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentplane/agentplane/internal/store/storetest"
)

// dbs is the database migrated once for the package, SQLite (dataDir copies it) and PostgreSQL
// (postgresURL copies it).
var dbs = storetest.NewTemplate()

// TestMain removes the binary buildBinary shared between the tests, and the template
// database, once they are done.
func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	dbs.Drop()
	os.Exit(code)
}

// dataDir returns a DATA_DIR of the test's own holding a migrated empty database (dbs.SQLiteFile
// names its copy agentplane.db, the file serve opens there): a first start then skips the
// migrations, which take seconds on SQLite under -race. The tests of a start on an empty
// directory (restart_test.go, the README walkthrough) give serve a t.TempDir() instead.
func dataDir(t *testing.T) string {
	t.Helper()
	return filepath.Dir(dbs.SQLiteFile(t))
}
