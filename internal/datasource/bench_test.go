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

func BenchmarkSample(b *testing.B) {
	tables := map[string]any{"tables": []any{
		map[string]any{"name": "customers", "columns": []any{map[string]any{"name": "id", "type": "integer"}, map[string]any{"name": "email", "type": "text"},
			map[string]any{"name": "country", "type": "text"}, map[string]any{"name": "created_at", "type": "timestamptz"}}},
		map[string]any{"name": "orders", "row_count": float64(1000), "columns": []any{map[string]any{"name": "id", "type": "integer"},
			map[string]any{"name": "customer_id", "type": "integer"}, map[string]any{"name": "status", "type": "text"},
			map[string]any{"name": "total_cents", "type": "integer"}, map[string]any{"name": "placed_at", "type": "timestamptz"}}},
	}}
	b.Run("query", func(b *testing.B) {
		f := newFixture(b)
		s := NewSample(f.st)
		defer s.Close()
		id := f.source("postgres", "", tables)
		benchQuery(b, s, id, "SELECT c.country, count(*) FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY c.country")
	})
	b.Run("build", func(b *testing.B) {
		cfg, err := ParseConfig("postgres", tables)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			d, err := buildSample(context.Background(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			d.close()
		}
	})
}
