package dbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Template is a database that a test binary migrates once, the first time a test asks, and
// that every test then copies: on the PostgreSQL server at TEST_DATABASE_URL with CREATE
// DATABASE … TEMPLATE (URL), a SQLite file by copying it (SQLiteFile). A copy costs a fraction
// of running the migrations per test (the store's 32 migrations: about 2 s each time under
// -race on a loaded machine, on either database). A package declares one, and its TestMain
// calls Drop after m.Run.
type Template struct {
	migrate func(ctx context.Context, url string) error

	mu    sync.Mutex
	done  bool   // the first attempt was made
	name  string // the template database; "" when it could not be made
	drops sync.WaitGroup
	turns chan struct{} // bounds the drops under way

	sqliteOnce sync.Once
	sqliteDir  string // holds the migrated SQLite file; removed by Drop
	sqliteErr  error
}

// NewTemplate returns a template whose database migrate fills; migrate must close every
// connection it opened before it returns (PostgreSQL copies only an idle template).
func NewTemplate(migrate func(ctx context.Context, url string) error) *Template {
	return &Template{migrate: migrate, turns: make(chan struct{}, 8)}
}

// URL returns the URL of a fresh database copied from the template, dropped once the test has
// ended; "" when TEST_DATABASE_URL is unset (the caller skips, saying so). When the server
// refuses to create databases it falls back to a fresh schema (PostgresURL), which the caller
// migrates as it always does.
//
// The drop runs in the background, while the next tests run (Drop waits for it): PostgreSQL
// forces a checkpoint on every DROP DATABASE, which takes a second or more while other tests
// write (2 cores, load 20), and drops asking at the same time share one (8 drops at once took
// 4.9 s on the loaded machine, 4 one after the other 10.3 s).
func (tp *Template) URL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		return ""
	}
	template, err := tp.database(base)
	if err != nil {
		t.Logf("no template database, migrating a schema instead: %v", err)
	}
	if template == "" {
		return PostgresURL(t)
	}
	name := "agentplane_test_" + randomHex()
	if err := adminExec(base, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, template)); err != nil {
		t.Fatalf("copy the template database: %v", err)
	}
	t.Cleanup(func() {
		tp.drops.Go(func() {
			tp.turns <- struct{}{}
			defer func() { <-tp.turns }()
			_ = adminExec(base, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		})
	})
	u, err := withDatabase(base, name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// database makes the template on the first call and returns its name: "" with the error when it
// could not be made, in which case later calls return "" at once.
func (tp *Template) database(base string) (string, error) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if tp.done {
		return tp.name, nil
	}
	tp.done = true
	name := "agentplane_template_" + randomHex()
	if err := adminExec(base, "CREATE DATABASE "+name); err != nil {
		return "", err
	}
	u, err := withDatabase(base, name)
	if err != nil {
		return "", err
	}
	if err := tp.migrate(context.Background(), u); err != nil {
		_ = adminExec(base, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		return "", fmt.Errorf("migrate the template database: %w", err)
	}
	tp.name = name
	return name, nil
}

// SQLiteFile returns the path of a SQLite database file in a directory of the test's own, a
// copy of a file migrated once per test binary (migrate given the path of an empty file):
// copying a few hundred KB costs nothing next to the migrations, which the race detector makes
// take seconds on SQLite.
func (tp *Template) SQLiteFile(t testing.TB) string {
	t.Helper()
	tp.sqliteOnce.Do(func() {
		dir, err := os.MkdirTemp("", "agentplane-template")
		if err != nil {
			tp.sqliteErr = err
			return
		}
		tp.sqliteDir = dir
		tp.sqliteErr = tp.migrate(context.Background(), filepath.Join(dir, sqliteName))
	})
	if tp.sqliteErr != nil {
		t.Fatalf("migrate the template SQLite file: %v", tp.sqliteErr)
	}
	path := filepath.Join(t.TempDir(), sqliteName)
	// The write-ahead log too, if closing the template left one: opening the copy replays it.
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(filepath.Join(tp.sqliteDir, sqliteName+suffix))
		if errors.Is(err, fs.ErrNotExist) && suffix != "" {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// sqliteName is the file name of the template SQLite database and of its copies.
const sqliteName = "agentplane.db"

// Drop waits for the copies to be dropped, drops the template database and removes the
// template SQLite file; TestMain calls it once the tests are done, before it looks for
// goroutines left behind (see storetest.Main).
func (tp *Template) Drop() {
	tp.drops.Wait()
	if tp.sqliteDir != "" {
		_ = os.RemoveAll(tp.sqliteDir)
	}
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if tp.name != "" {
		_ = adminExec(os.Getenv("TEST_DATABASE_URL"), "DROP DATABASE IF EXISTS "+tp.name+" WITH (FORCE)")
		tp.name = ""
	}
}

// adminExec runs one statement on its own connection to the database at base.
func adminExec(base, statement string) error {
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return err
	}
	defer admin.Close()
	_, err = admin.ExecContext(context.Background(), statement)
	return err
}

// withDatabase is the URL base with its database replaced by name.
func withDatabase(base, name string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

func randomHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
