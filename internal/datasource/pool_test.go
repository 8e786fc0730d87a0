package datasource

import (
	"context"
	"database/sql"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/vault"
)

// sqliteFile creates a SQLite database holding one table t with the given value, and
// returns its path.
func sqliteFile(t *testing.T, value string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE t (v text); INSERT INTO t VALUES (?)", value); err != nil {
		t.Fatal(err)
	}
	return path
}

func (l *Live) poolOf(id string) *pool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pools[testWS+"/"+id]
}

func closed(p *pool) bool { return p.db.Ping() != nil }

// TestLivePools: one pool per data source, replaced (and the old one closed) when the active
// version or the credential changes, never while a query uses it, and all closed by Close.
func TestLivePools(t *testing.T) {
	f := newFixture(t)
	l := f.live()
	ctx := context.Background()
	first, second := sqliteFile(t, "first"), sqliteFile(t, "second")
	cred := f.credential("database_url", first, nil)
	id := f.source("sqlite", cred, map[string]any{})
	value := func() string {
		t.Helper()
		res, err := l.Query(ctx, testWS, id, Request{Query: "SELECT v FROM t"})
		if err != nil {
			t.Fatal(err)
		}
		return res.Rows[0][0].(string)
	}
	if v := value(); v != "first" {
		t.Fatal(v)
	}
	p1 := l.poolOf(id)
	value()
	if l.poolOf(id) != p1 || closed(p1) {
		t.Fatal("the same version and credential did not reuse the pool")
	}

	f.promote(id, map[string]any{"max_rows": float64(5)})
	value()
	p2 := l.poolOf(id)
	if p2 == p1 || !closed(p1) {
		t.Fatal("a new version did not replace and close the pool")
	}

	if _, err := vault.CredentialUpdate(ctx, f.st, testWS, cred, domain.CredentialPatch{Value: &second}, f.box); err != nil {
		t.Fatal(err)
	}
	if v := value(); v != "second" {
		t.Fatalf("after the credential changed: %s", v)
	}
	if p3 := l.poolOf(id); p3 == p2 || !closed(p2) {
		t.Fatal("a changed credential did not replace and close the pool")
	}

	// config.path overrides the credential's path.
	f.promote(id, map[string]any{"path": first})
	if v := value(); v != "first" {
		t.Fatalf("config.path: %s", v)
	}

	// Queries running while the version changes all succeed: a replaced pool closes only
	// once its last query is done.
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if _, err := l.Query(ctx, testWS, id, Request{Query: "SELECT v FROM t"}); err != nil {
					errs <- err
				}
			}
		}()
		if i%2 == 0 {
			f.promote(id, map[string]any{"max_rows": float64(10 + i)})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("query during promotions: %v", err)
	}

	last := l.poolOf(id)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if !closed(last) {
		t.Fatal("Close left a pool open")
	}
	if _, err := l.Query(ctx, testWS, id, Request{Query: "SELECT 1"}); err == nil {
		t.Fatal("a query after Close succeeded")
	}
}

// TestLiveSourceErrors: a data source that cannot be queried as configured says why, and one
// that cannot be reached is unreachable.
func TestLiveSourceErrors(t *testing.T) {
	f := newFixture(t)
	l := f.live()
	ctx := context.Background()
	q := func(id string) error {
		_, err := l.Query(ctx, testWS, id, Request{Query: "SELECT 1"})
		return err
	}
	wantSourceError(t, q(f.source("postgres", "", map[string]any{})), false, "needs a database_url credential")
	wantSourceError(t, q(f.source("mysql", "", map[string]any{})), false, "needs a database_url credential")
	wantSourceError(t, q(f.source("sqlite", "", map[string]any{})), false, "config.path")
	bearer := f.credential("bearer_token", "tok", nil)
	wantSourceError(t, q(f.source("postgres", bearer, map[string]any{})), false, "needs a database_url credential")
	wantSourceError(t, q(f.source("postgres", f.credential("database_url", "postgres:///db?host=/var/run/postgresql", nil), map[string]any{})), false, "unix sockets")
	wantSourceError(t, q(f.source("mysql", f.credential("database_url", "root@unix(/tmp/mysql.sock)/db", nil), map[string]any{})), false, "unix sockets")
	wantSourceError(t, q(f.source("mysql", f.credential("database_url", "not a dsn", nil), map[string]any{})), false, "neither a MySQL DSN")

	// Nothing listens on a port we just closed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	pg := f.credential("database_url", "postgres://u:secret-pw@"+addr+"/db?sslmode=disable", nil)
	err = q(f.source("postgres", pg, map[string]any{}))
	wantSourceError(t, err, true, "could not connect")
	if se := err.(*SourceError); strings.Contains(se.Message, "secret-pw") {
		t.Fatalf("the message shows the password: %s", se.Message)
	}
	wantSourceError(t, q(f.source("mysql", f.credential("database_url", "u:pw@tcp("+addr+")/db", nil), map[string]any{})), true, "could not connect")
	wantSourceError(t, q(f.source("sqlite", "", map[string]any{"path": filepath.Join(t.TempDir(), "missing.db")})), true, "could not connect")

	// The server's own data directory is off limits, also through a symbolic link.
	dir := t.TempDir()
	own := filepath.Join(dir, "agentplane.db")
	if err := os.WriteFile(own, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "innocent.db")
	if err := os.Symlink(own, link); err != nil {
		t.Fatal(err)
	}
	guarded := f.live(dir)
	for _, p := range []string{own, link, "file:" + own} {
		_, err := guarded.Query(ctx, testWS, f.source("sqlite", f.credential("database_url", p, nil), map[string]any{}), Request{Query: "SELECT 1"})
		wantSourceError(t, err, false, "data directory")
	}

	if _, err := l.Query(ctx, testWS, "nope", Request{Query: "SELECT 1"}); !store.IsNotFound(err) {
		t.Fatalf("missing data source: %v", err)
	}
}

// TestDescribeCache: the catalog is read once per pool, so a table added later is not seen
// until the version or the credential changes, and then it is.
func TestDescribeCache(t *testing.T) {
	f := newFixture(t)
	l := f.live()
	ctx := context.Background()
	first, second := sqliteFile(t, "first"), sqliteFile(t, "second")
	cred := f.credential("database_url", first, nil)
	id := f.source("sqlite", cred, map[string]any{})
	names := func() []string {
		t.Helper()
		tables, err := l.Describe(ctx, testWS, id)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tb := range tables {
			out = append(out, tb.Name)
		}
		return out
	}
	if got := names(); strings.Join(got, ",") != "t" {
		t.Fatalf("tables %v", got)
	}
	for _, path := range []string{first, second} {
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = db.Exec("CREATE TABLE later (id int)")
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := names(); len(got) != 1 {
		t.Fatalf("the catalog was read again within the pool: %v", got)
	}
	if _, err := vault.CredentialUpdate(ctx, f.st, testWS, cred, domain.CredentialPatch{Value: &second}, f.box); err != nil {
		t.Fatal(err)
	}
	if got := names(); len(got) != 2 {
		t.Fatalf("a changed credential did not read the catalog again: %v", got)
	}
}
