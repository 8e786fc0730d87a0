package e2e

import (
	"testing"

	"github.com/agentplane/agentplane/internal/dbtest"

	_ "github.com/jackc/pgx/v5/stdlib"
)

// postgresURL returns a URL of the database at TEST_DATABASE_URL pointing at a schema of its
// own, dropped when the test ends; "" (and a log line) when the variable is unset.
func postgresURL(t *testing.T) string {
	t.Helper()
	u := dbtest.PostgresURL(t)
	if u == "" {
		t.Log("TEST_DATABASE_URL is not set: skipping the PostgreSQL target")
	}
	return u
}

// forEachServeDB runs suite against `serve` on SQLite and, when TEST_DATABASE_URL is set, on
// PostgreSQL (a fresh schema), giving it the environment to start serve with; the two run
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
