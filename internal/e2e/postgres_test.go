package e2e

import (
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
)

// postgresURL returns the URL of a database of the test's own on the server at
// TEST_DATABASE_URL, a copy of the package's migrated template (serve then skips the
// migrations), dropped when the test ends; "" (and a log line) when the variable is unset.
func postgresURL(t *testing.T) string {
	t.Helper()
	u := dbs.URL(t)
	if u == "" {
		t.Log("TEST_DATABASE_URL is not set: skipping the PostgreSQL target")
	}
	return u
}

// forEachServeDB runs suite against `serve` on SQLite and, when TEST_DATABASE_URL is set, on
// PostgreSQL (a database of its own), giving it the environment to start serve with; the two run
// side by side (they share nothing, and mostly wait on their servers).
func forEachServeDB(t *testing.T, suite func(t *testing.T, env map[string]string)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		suite(t, serveEnv(dataDir(t)))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		pg := postgresURL(t)
		if pg == "" {
			t.Skip("TEST_DATABASE_URL is not set")
		}
		env := serveEnv(t.TempDir())
		env["DATABASE_URL"] = pg
		suite(t, env)
	})
}
