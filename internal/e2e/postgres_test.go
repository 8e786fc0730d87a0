package e2e

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/segmentio/ksuid"
)

// postgresURL returns a URL of the database at TEST_DATABASE_URL pointing at a schema of its
// own, dropped when the test ends; "" (and a log line) when the variable is unset.
func postgresURL(t *testing.T) string {
	t.Helper()
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		t.Log("TEST_DATABASE_URL is not set: skipping the PostgreSQL target")
		return ""
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	schema := "e2e_" + strings.ToLower(ksuid.New().String())
	if _, err := admin.ExecContext(context.Background(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		if a, err := sql.Open("pgx", base); err == nil {
			_, _ = a.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			a.Close()
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// forEachServeDB runs suite against `serve` on SQLite and, when TEST_DATABASE_URL is set, on
// PostgreSQL (a fresh schema), giving it the environment to start serve with.
func forEachServeDB(t *testing.T, suite func(t *testing.T, env map[string]string)) {
	t.Run("sqlite", func(t *testing.T) { suite(t, serveEnv(t.TempDir())) })
	t.Run("postgres", func(t *testing.T) {
		pg := postgresURL(t)
		if pg == "" {
			t.Skip("TEST_DATABASE_URL is not set")
		}
		env := serveEnv(t.TempDir())
		env["DATABASE_URL"] = pg
		suite(t, env)
	})
}
