package seed

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/datasource"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/store/storetest"
)

// sampleFixture is a store with the test workspace, where data sources are made for Sample.
type sampleFixture struct {
	t  testing.TB
	st *store.Store
}

func newSampleFixture(t testing.TB) *sampleFixture {
	t.Helper()
	st := storetest.Memory(t)
	storetest.Workspace(t, st, &domain.Workspace{ID: testWorkspace, Name: "Test", Slug: "test"})
	return &sampleFixture{t: t, st: st}
}

// sample is a Sample executor over the fixture's store, closed when the test ends.
func (f *sampleFixture) sample() *Sample {
	s := NewSample(f.st)
	f.t.Cleanup(func() { s.Close() })
	return s
}

// source stores a data source of typ (no credential: Sample needs none) with cfg as its
// active version and returns its id.
func (f *sampleFixture) source(typ, _ string, cfg map[string]any) string {
	f.t.Helper()
	_, err := datasource.ParseConfig(typ, cfg)
	var d *domain.DataSource
	if err == nil {
		d, err = f.st.DataSourceCreate(context.Background(), &domain.DataSource{WorkspaceID: testWorkspace, Name: "ds " + typ, Type: typ}, domain.JSONObject(cfg), "")
	}
	if err != nil {
		f.t.Fatalf("data source %s: %v", typ, err)
	}
	return d.ID
}

// promote makes cfg the data source's active version.
func (f *sampleFixture) promote(id string, cfg map[string]any) {
	f.t.Helper()
	ctx := context.Background()
	v, err := f.st.DataSourceVersionCreate(ctx, &domain.DataSourceVersion{WorkspaceID: testWorkspace, DataSourceID: id, Config: domain.JSONObject(cfg)})
	if err == nil {
		err = f.st.DataSourceVersionPromote(ctx, testWorkspace, id, v.ID)
	}
	if err != nil {
		f.t.Fatal(err)
	}
}

// wantQueryError fails unless err is a *datasource.QueryError (a timeout or not) whose
// message mentions part.
func wantQueryError(t *testing.T, err error, timeout bool, part string) {
	t.Helper()
	var qe *datasource.QueryError
	if !errors.As(err, &qe) || qe.Timeout != timeout || !strings.Contains(strings.ToLower(qe.Message), strings.ToLower(part)) {
		t.Fatalf("got %v (%T), want a QueryError (timeout %v) mentioning %q", err, err, timeout, part)
	}
}

// wantFieldError fails unless err is a *domain.FieldError on field.
func wantFieldError(t *testing.T, err error, field string) {
	t.Helper()
	var fe *domain.FieldError
	if !errors.As(err, &fe) || fe.Field != field {
		t.Fatalf("got %v (%T), want a FieldError on %s", err, err, field)
	}
}

// shopConfig is shaped like the seed's orders database.
func shopConfig(t *testing.T, extra map[string]any) map[string]any {
	t.Helper()
	raw := map[string]any{}
	if err := json.Unmarshal([]byte(`{
		"schema": "public", "max_rows": 1000,
		"tables": [
			{"name": "customers", "columns": [
				{"name": "id", "type": "integer"}, {"name": "email", "type": "text"}, {"name": "full_name", "type": "text"},
				{"name": "country", "type": "text"}, {"name": "created_at", "type": "timestamptz"}]},
			{"name": "orders", "row_count": 120, "columns": [
				{"name": "id", "type": "integer"}, {"name": "customer_id", "type": "integer"}, {"name": "status", "type": "text"},
				{"name": "total_cents", "type": "integer"}, {"name": "currency", "type": "text"}, {"name": "paid", "type": "boolean"},
				{"name": "placed_at", "type": "timestamptz"}, {"name": "shipped_at", "type": "timestamptz", "nullable": true},
				{"name": "meta", "type": "jsonb"}]}
		]}`), &raw); err != nil {
		t.Fatal(err)
	}
	for k, v := range extra {
		raw[k] = v
	}
	return raw
}

func names(cols []datasource.Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

// TestSampleSQL: the emulator's result is what the SQL says over the sample tables.
func TestSampleSQL(t *testing.T) {
	f := newSampleFixture(t)
	s := f.sample()
	ctx := context.Background()
	id := f.source("postgres", "", shopConfig(t, nil))
	q := func(query string, params any, limit int) *datasource.Result {
		t.Helper()
		res, err := s.Query(ctx, testWorkspace, id, datasource.Request{Query: query, Params: params, Limit: limit})
		if err != nil {
			t.Fatalf("%q: %v", query, err)
		}
		return res
	}

	res := q("SELECT * FROM customers", nil, 0)
	if got := names(res.Columns); !reflect.DeepEqual(got, []string{"id", "email", "full_name", "country", "created_at"}) || len(res.Rows) != 50 {
		t.Fatalf("%v, %d rows", got, len(res.Rows))
	}
	if res.Columns[0].Type != "integer" || res.Columns[4].Type != "timestamptz" {
		t.Fatalf("declared types: %+v", res.Columns)
	}
	var prev time.Time
	for i, row := range res.Rows[:5] {
		if row[0] != int64(i+1) {
			t.Fatalf("row %d id %v", i, row[0])
		}
		first := strings.ToLower(strings.Fields(row[2].(string))[0])
		if email := row[1].(string); !strings.HasPrefix(email, first+".") || !strings.HasSuffix(email, "@example.com") {
			t.Fatalf("email %q does not belong to %q", email, row[2])
		}
		ts, err := time.Parse(time.RFC3339, row[4].(string))
		if err != nil || !ts.After(prev) {
			t.Fatalf("created_at %v", row[4])
		}
		prev = ts
	}
	if again := q("SELECT * FROM customers", nil, 0); !reflect.DeepEqual(again, res) {
		t.Fatal("the same query gave different rows")
	}

	// WHERE filters, ORDER BY sorts, GROUP BY groups, joins join, parameters bind.
	paid := q("SELECT id, status FROM orders WHERE status = 'paid' ORDER BY id DESC", nil, 0)
	for i, row := range paid.Rows {
		if row[1] != "paid" || i > 0 && row[0].(int64) >= paid.Rows[i-1][0].(int64) {
			t.Fatalf("filter and order: %v", paid.Rows)
		}
	}
	count := q("SELECT count(*) AS n FROM orders WHERE status = $1", []any{"paid"}, 0)
	if count.Rows[0][0] != int64(len(paid.Rows)) || count.Columns[0] != (datasource.Column{Name: "n", Type: "integer"}) {
		t.Fatalf("count %v vs %d rows", count.Rows, len(paid.Rows))
	}
	groups := q("SELECT status, count(*) FROM orders GROUP BY status ORDER BY 2 DESC", nil, 0)
	total := int64(0)
	for _, g := range groups.Rows {
		total += g[1].(int64)
	}
	if total != 120 {
		t.Fatalf("groups add up to %d", total)
	}
	join := q(`SELECT o.id, c.email FROM public.orders o JOIN customers c ON c.id = o.customer_id WHERE o.id <= ? ORDER BY o.id`, []any{json.Number("3")}, 0)
	if len(join.Rows) != 3 || !strings.HasSuffix(join.Rows[0][1].(string), "@example.com") {
		t.Fatalf("join: %v", join.Rows)
	}
	named := q("SELECT id FROM orders WHERE id BETWEEN :lo AND :hi", map[string]any{"lo": float64(5), "hi": float64(7)}, 0)
	if len(named.Rows) != 3 {
		t.Fatalf("named parameters: %v", named.Rows)
	}
	values := q("SELECT paid, meta, shipped_at FROM orders", nil, 0)
	nulls := 0
	for _, row := range values.Rows {
		if _, ok := row[0].(bool); !ok {
			t.Fatalf("boolean column gave %T", row[0])
		}
		if _, ok := row[1].(json.RawMessage); !ok {
			t.Fatalf("jsonb column gave %T", row[1])
		}
		if row[2] == nil {
			nulls++
		}
	}
	if nulls == 0 {
		t.Fatal("a nullable column never held null")
	}

	// Bounds.
	if r := q("SELECT id FROM orders", nil, 10); len(r.Rows) != 10 || !r.Truncated {
		t.Fatalf("limit: %d rows, truncated %v", len(r.Rows), r.Truncated)
	}
	if r := q("SELECT id FROM orders LIMIT 10", nil, 10); len(r.Rows) != 10 || r.Truncated {
		t.Fatalf("LIMIT within the bound: truncated %v", r.Truncated)
	}

	// Errors are SQLite's own, and writes are refused.
	for _, c := range []struct{ query, want string }{
		{"SELECT * FROM invoices", "no such table: invoices"},
		{"SELECT * FROM invoices", "sample tables are: customers, orders"},
		{"SELECT phone FROM customers", "no such column: phone"},
		{"DELETE FROM orders", "readonly"},
		{"UPDATE orders SET status = 'x'", "readonly"},
		{"DROP TABLE orders", "readonly"},
		{"ATTACH 'file:/tmp/x.db' AS x", "too many attached"},
	} {
		_, err := s.Query(ctx, testWorkspace, id, datasource.Request{Query: c.query})
		wantQueryError(t, err, false, c.want)
	}
	if r := q("SELECT count(*) FROM orders", nil, 0); r.Rows[0][0] != int64(120) {
		t.Fatalf("orders after refused writes: %v", r.Rows)
	}
	_, err := s.Query(ctx, testWorkspace, id, datasource.Request{Query: "SELECT 1", Limit: 1001})
	wantFieldError(t, err, "limit")

	// A timeout interrupts the query.
	f.promote(id, shopConfig(t, map[string]any{"max_execution_ms": float64(200)}))
	_, err = s.Query(ctx, testWorkspace, id, datasource.Request{Query: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"})
	wantQueryError(t, err, true, "timed out after 200 ms")

	// A new active version has its own tables.
	f.promote(id, map[string]any{"max_rows": float64(3), "tables": []any{map[string]any{"name": "events",
		"columns": []any{map[string]any{"name": "id", "type": "bigint"}, map[string]any{"name": "kind", "type": "text"}}}}})
	if r := q("SELECT * FROM events", nil, 0); len(r.Rows) != 3 || !r.Truncated || r.Columns[0].Type != "bigint" {
		t.Fatalf("after promotion: %+v", r)
	}
	_, err = s.Query(ctx, testWorkspace, id, datasource.Request{Query: "SELECT * FROM customers"})
	wantQueryError(t, err, false, "no such table")
	tables, err := s.Describe(ctx, testWorkspace, id)
	if err != nil || len(tables) != 1 || tables[0].Name != "events" || tables[0].Columns[1] != (datasource.Field{Name: "kind", Type: "text", Nullable: true}) {
		t.Fatalf("describe: %+v %v", tables, err)
	}
}

// TestSampleConcurrentAndEviction: concurrent first queries build one database, and the
// oldest versions' databases are closed beyond maxSampleDBs.
func TestSampleConcurrentAndEviction(t *testing.T) {
	f := newSampleFixture(t)
	s := f.sample()
	ctx := context.Background()
	id := f.source("sqlite", "", shopConfig(t, nil))
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Query(ctx, testWorkspace, id, datasource.Request{Query: "SELECT count(*) FROM orders"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if len(s.dbs) != 1 {
		t.Fatalf("%d sample databases for one version", len(s.dbs))
	}
	var first *sampleDB
	for _, d := range s.dbs {
		first = d
	}
	for i := range maxSampleDBs {
		f.promote(id, map[string]any{"max_rows": float64(i + 1), "tables": shopConfig(t, nil)["tables"]})
		if _, err := s.Query(ctx, testWorkspace, id, datasource.Request{Query: "SELECT 1 FROM customers LIMIT 1"}); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.dbs) != maxSampleDBs || first.keep.Ping() == nil {
		t.Fatalf("%d sample databases; the oldest still open: %v", len(s.dbs), first.keep.Ping() == nil)
	}
}

func TestSampleHTTP(t *testing.T) {
	f := newSampleFixture(t)
	s := f.sample()
	ctx := context.Background()
	q := func(id, query string, params any, limit int) *datasource.Result {
		t.Helper()
		res, err := s.Query(ctx, testWorkspace, id, datasource.Request{Query: query, Params: params, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	id := f.source("http", "", map[string]any{"base_url": "https://catalog.example.com/api/v1/products"})
	res := q(id, "/?category=tea&limit=5", nil, 0)
	if got := names(res.Columns); !reflect.DeepEqual(got, []string{"sku", "name", "category", "price", "stock"}) || len(res.Rows) != 5 || res.Truncated {
		t.Fatalf("%v, %d rows", got, len(res.Rows))
	}
	for _, row := range res.Rows {
		if row[2] != "tea" {
			t.Fatalf("category filter not applied: %v", row)
		}
	}
	if all := q(id, "/products", nil, 10); len(all.Rows) != 10 || !all.Truncated {
		t.Fatalf("limit 10 of 25: %d rows truncated=%v", len(all.Rows), all.Truncated)
	}
	if page := q(id, "/products", map[string]any{"offset": "20"}, 0); len(page.Rows) != 5 {
		t.Fatalf("offset 20 of 25: %d rows", len(page.Rows))
	}
	things := f.source("http", "", map[string]any{"sample_rows": float64(3), "sample_fields": []any{
		"id", map[string]any{"name": "title", "type": "string"}, "is_active", "updated_at"}})
	res = q(things, "/things", nil, 0)
	if len(res.Rows) != 3 || res.Columns[0].Type != "integer" || res.Columns[2].Type != "boolean" || res.Columns[3].Type != "timestamp" {
		t.Fatalf("sample fields: %+v", res)
	}
	one := q(things, "/things/2", nil, 0)
	if len(one.Rows) != 1 || one.Rows[0][0] != int64(2) || !reflect.DeepEqual(one.Rows[0], res.Rows[1]) {
		t.Fatalf("item 2: %v vs %v", one.Rows, res.Rows[1])
	}
	_, err := s.Query(ctx, testWorkspace, things, datasource.Request{Query: "https://evil.example/"})
	wantFieldError(t, err, "query")
}

// benchSampleQuery measures one query through Sample: the lookup of the data source, the
// sample database (built once) and the read-only transaction.
func benchSampleQuery(b *testing.B, s *Sample, id, query string) {
	ctx := context.Background()
	if _, err := s.Query(ctx, testWorkspace, id, datasource.Request{Query: query}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Query(ctx, testWorkspace, id, datasource.Request{Query: query}); err != nil {
			b.Fatal(err)
		}
	}
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
		f := newSampleFixture(b)
		s := f.sample()
		id := f.source("postgres", "", tables)
		benchSampleQuery(b, s, id, "SELECT c.country, count(*) FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY c.country")
	})
	b.Run("build", func(b *testing.B) {
		cfg, err := datasource.ParseConfig("postgres", tables)
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
