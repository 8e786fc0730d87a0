package dbtest

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	_ "modernc.org/sqlite" // SQLite driver, no cgo
)

// countingTemplate is a template whose migration creates the table t (one row, "migrated")
// and counts its runs.
func countingTemplate(driver string, runs *atomic.Int32) *Template {
	return NewTemplate(func(ctx context.Context, url string) error {
		runs.Add(1)
		db, err := sql.Open(driver, url)
		if err != nil {
			return err
		}
		defer db.Close()
		_, err = db.ExecContext(ctx, "CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('migrated')")
		return err
	})
}

// rows reads the values of table t.
func rows(t *testing.T, driver, url string) []string {
	t.Helper()
	db, err := sql.Open(driver, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, err := db.Query("SELECT v FROM t ORDER BY v")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []string
	for r.Next() {
		var v string
		if err := r.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func write(t *testing.T, driver, url string) {
	t.Helper()
	db, err := sql.Open(driver, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("INSERT INTO t VALUES ('written')"); err != nil {
		t.Fatal(err)
	}
}

// TestTemplateSQLiteFile: every test gets a copy of the file migrated once, private (0600) and
// apart from the others; Drop removes the template.
func TestTemplateSQLiteFile(t *testing.T) {
	var runs atomic.Int32
	tp := countingTemplate("sqlite", &runs)
	a, b := tp.SQLiteFile(t), tp.SQLiteFile(t)
	if a == b || runs.Load() != 1 {
		t.Fatalf("copies %s and %s after %d migrations", a, b, runs.Load())
	}
	if fi, err := os.Stat(a); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("copy: %v %v", fi, err)
	}
	write(t, "sqlite", a)
	if got := strings.Join(rows(t, "sqlite", a), ","); got != "migrated,written" {
		t.Fatalf("first copy: %s", got)
	}
	if got := strings.Join(rows(t, "sqlite", b), ","); got != "migrated" {
		t.Fatalf("second copy sees the first one's write: %s", got)
	}
	dir := tp.sqliteDir
	tp.Drop()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("template left behind: %v", err)
	}
}

// TestTemplatePostgres: every test gets a database copied from the one migrated once, apart
// from the others; the copies go once their test ends, and Drop waits for them and drops the
// template.
func TestTemplatePostgres(t *testing.T) {
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		t.Skip(SkipMessage)
	}
	var runs atomic.Int32
	tp := countingTemplate("pgx", &runs)
	var names []string
	t.Run("copies", func(t *testing.T) {
		a, b := tp.URL(t), tp.URL(t)
		if a == b || runs.Load() != 1 {
			t.Fatalf("copies %s and %s after %d migrations", a, b, runs.Load())
		}
		write(t, "pgx", a)
		if got := strings.Join(rows(t, "pgx", a), ","); got != "migrated,written" {
			t.Fatalf("first copy: %s", got)
		}
		if got := strings.Join(rows(t, "pgx", b), ","); got != "migrated" {
			t.Fatalf("second copy sees the first one's write: %s", got)
		}
		for _, u := range []string{a, b} {
			p, err := url.Parse(u)
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, strings.TrimPrefix(p.Path, "/"))
		}
	})
	names = append(names, tp.name)
	tp.Drop()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var left int
	if err := admin.QueryRow("SELECT count(*) FROM pg_database WHERE datname = ANY($1)", names).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d of %v left after Drop: %v", left, names, err)
	}
}
