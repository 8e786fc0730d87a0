package datasource

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/agentplane/agentplane/internal/dbtest"
)

// benchQuery measures one small query through an executor: the lookup of the data source
// and its credential, the pool, the read-only transaction and its set-up, and the rows.
func benchQuery(b *testing.B, ex Executor, id, query string) {
	ctx := context.Background()
	if _, err := ex.Query(ctx, testWS, id, Request{Query: query}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := ex.Query(ctx, testWS, id, Request{Query: query}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLiveQuery(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "b.db")
		db, err := sql.Open("sqlite", path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := db.Exec("CREATE TABLE t (id integer, name text); WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100) INSERT INTO t SELECT x, 'n' || x FROM c"); err != nil {
			b.Fatal(err)
		}
		db.Close()
		f := newFixture(b)
		l := NewLive(LiveConfig{Store: f.st, Secrets: f.box})
		defer l.Close()
		id := f.source("sqlite", "", map[string]any{"path": path})
		benchQuery(b, l, id, "SELECT id, name FROM t WHERE id <= 10")
	})
	b.Run("postgres", func(b *testing.B) {
		u := dbtest.PostgresURL(b)
		if u == "" {
			b.Skip(dbtest.SkipMessage)
		}
		f := newFixture(b)
		l := NewLive(LiveConfig{Store: f.st, Secrets: f.box})
		defer l.Close()
		id := f.source("postgres", f.credential("database_url", u, nil), map[string]any{})
		benchQuery(b, l, id, "SELECT g, 'n' || g FROM generate_series(1, 10) g")
	})
}
