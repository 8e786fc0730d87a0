package datasource

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// shopConfig is shaped like the seed's orders database.
func shopConfig(t *testing.T, typ string, extra map[string]any) *Config {
	t.Helper()
	raw := map[string]any{}
	if err := json.Unmarshal([]byte(`{
		"max_rows": 1000,
		"tables": [
			{"name": "customers", "columns": [
				{"name": "id", "type": "integer"}, {"name": "email", "type": "text"}, {"name": "full_name", "type": "text"},
				{"name": "country", "type": "text"}, {"name": "created_at", "type": "timestamptz"}]},
			{"name": "orders", "row_count": 120, "columns": [
				{"name": "id", "type": "integer"}, {"name": "customer_id", "type": "integer"}, {"name": "status", "type": "text"},
				{"name": "total_cents", "type": "integer"}, {"name": "currency", "type": "text"},
				{"name": "placed_at", "type": "timestamptz"}, {"name": "shipped_at", "type": "timestamptz", "nullable": true}]}
		]}`), &raw); err != nil {
		t.Fatal(err)
	}
	for k, v := range extra {
		raw[k] = v
	}
	cfg, err := ParseConfig(typ, raw)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func names(cols []Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

func TestMockSQLShapes(t *testing.T) {
	t.Parallel()
	cfg := shopConfig(t, "postgres", nil)
	tests := []struct {
		query     string
		params    any
		limit     int
		cols      []string
		rows      int
		truncated bool
	}{
		{query: "SELECT * FROM customers", cols: []string{"id", "email", "full_name", "country", "created_at"}, rows: 50},
		{query: "select email, id from CUSTOMERS limit 3", cols: []string{"email", "id"}, rows: 3},
		{query: "SELECT c.email AS mail, c.id FROM public.customers c LIMIT 2 OFFSET 48", cols: []string{"mail", "id"}, rows: 2},
		{query: "SELECT * FROM customers OFFSET 45", cols: []string{"id", "email", "full_name", "country", "created_at"}, rows: 5},
		{query: "SELECT id FROM orders", cols: []string{"id"}, rows: 120},
		{query: "SELECT id FROM orders", limit: 10, cols: []string{"id"}, rows: 10, truncated: true},
		{query: "SELECT id FROM orders LIMIT 10", limit: 10, cols: []string{"id"}, rows: 10},
		{query: "SELECT id FROM orders LIMIT $1", params: []any{float64(4)}, cols: []string{"id"}, rows: 4},
		{query: "SELECT id FROM orders ORDER BY placed_at DESC FETCH FIRST 7 ROWS ONLY", cols: []string{"id"}, rows: 7},
		{query: "SELECT count(*) FROM orders WHERE status = 'paid'", cols: []string{"count"}, rows: 1},
		{query: "SELECT status, count(*) AS n FROM orders GROUP BY status", cols: []string{"status", "n"}, rows: 5},
		{query: "SELECT o.id, c.email FROM orders o JOIN customers c ON c.id = o.customer_id LIMIT 5", cols: []string{"id", "email"}, rows: 5},
		{query: "SELECT o.*, c.country FROM orders AS o LEFT OUTER JOIN customers AS c USING (id) LIMIT 1",
			cols: []string{"id", "customer_id", "status", "total_cents", "currency", "placed_at", "shipped_at", "country"}, rows: 1},
		{query: "WITH big AS (SELECT id, total_cents FROM orders WHERE total_cents > 1000) SELECT total_cents FROM big LIMIT 3", cols: []string{"total_cents"}, rows: 3},
		{query: "SELECT x.mail FROM (SELECT email AS mail FROM customers LIMIT 4) x", cols: []string{"mail"}, rows: 4},
		{query: "SELECT 1", cols: []string{"?column?"}, rows: 1},
		{query: "SELECT 1 AS one, 'a' AS letter, now() AS ts", cols: []string{"one", "letter", "ts"}, rows: 1},
		{query: "SELECT lower(email), total_cents::numeric / 100 AS total FROM customers, orders LIMIT 2", cols: []string{"lower", "total"}, rows: 2},
		{query: "SELECT DISTINCT country FROM customers", cols: []string{"country"}, rows: 50},
		{query: "SELECT id FROM orders UNION SELECT id FROM customers LIMIT 3", cols: []string{"id"}, rows: 3},
		{query: "SELECT * FROM customers;", limit: 1000, cols: []string{"id", "email", "full_name", "country", "created_at"}, rows: 50},
	}
	for _, tt := range tests {
		res, err := Mock(cfg, Request{Query: tt.query, Params: tt.params, Limit: tt.limit})
		if err != nil {
			t.Errorf("%q: %v", tt.query, err)
			continue
		}
		if got := names(res.Columns); !reflect.DeepEqual(got, tt.cols) {
			t.Errorf("%q: columns %v, want %v", tt.query, got, tt.cols)
		}
		if len(res.Rows) != tt.rows || res.Truncated != tt.truncated {
			t.Errorf("%q: %d rows truncated=%v, want %d truncated=%v", tt.query, len(res.Rows), res.Truncated, tt.rows, tt.truncated)
		}
		for _, row := range res.Rows {
			if len(row) != len(res.Columns) {
				t.Fatalf("%q: row %v does not match columns %v", tt.query, row, res.Columns)
			}
		}
	}
}

func TestMockSQLValues(t *testing.T) {
	t.Parallel()
	cfg := shopConfig(t, "postgres", nil)
	res, err := Mock(cfg, Request{Query: "SELECT id, email, full_name, country, created_at FROM customers LIMIT 3 OFFSET 1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Columns[0].Type != "integer" || res.Columns[4].Type != "timestamptz" {
		t.Fatalf("column types %v", res.Columns)
	}
	var prev time.Time
	for i, row := range res.Rows {
		if row[0] != int64(i+2) {
			t.Errorf("row %d id %v, want %d (OFFSET 1)", i, row[0], i+2)
		}
		email, name := row[1].(string), row[2].(string)
		first := strings.ToLower(strings.Fields(name)[0])
		if !strings.HasSuffix(email, "@example.com") || !strings.HasPrefix(email, first+".") {
			t.Errorf("row %d: email %q does not belong to %q", i, email, name)
		}
		if c := row[3].(string); len(c) != 2 {
			t.Errorf("row %d: country %q", i, c)
		}
		ts, err := time.Parse(time.RFC3339, row[4].(string))
		if err != nil || !ts.After(prev) {
			t.Errorf("row %d: created_at %v not a later RFC 3339 time (%v)", i, row[4], err)
		}
		prev = ts
	}
	again, _ := Mock(cfg, Request{Query: "SELECT id, email, full_name, country, created_at FROM customers LIMIT 3 OFFSET 1"})
	if !reflect.DeepEqual(res, again) {
		t.Fatal("the same query gave different rows")
	}
	sub, _ := Mock(cfg, Request{Query: "SELECT email FROM customers LIMIT 1 OFFSET 2"})
	if sub.Rows[0][0] != res.Rows[1][1] {
		t.Fatalf("column values depend on the select list: %v vs %v", sub.Rows[0][0], res.Rows[1][1])
	}

	count, _ := Mock(cfg, Request{Query: "SELECT count(*), sum(total_cents), min(id), max(id) FROM orders"})
	row := count.Rows[0]
	if row[0] != int64(120) || row[2] != int64(1) || row[3] != int64(120) {
		t.Fatalf("aggregates %v", row)
	}
	if count.Columns[0].Type != "bigint" || count.Columns[1].Type != "bigint" || count.Columns[2].Type != "integer" {
		t.Fatalf("aggregate types %v", count.Columns)
	}
	nulls, _ := Mock(cfg, Request{Query: "SELECT shipped_at FROM orders"})
	seenNull := false
	for _, r := range nulls.Rows {
		seenNull = seenNull || r[0] == nil
	}
	if !seenNull {
		t.Fatal("a nullable column never held null")
	}
}

func TestMockSQLErrors(t *testing.T) {
	t.Parallel()
	cfg := shopConfig(t, "postgres", map[string]any{"max_rows": float64(20)})
	tests := []struct {
		query  string
		params any
		limit  int
		field  string
		msg    []string
	}{
		{query: "SELECT * FROM products", field: "query", msg: []string{`"products"`, "customers, orders"}},
		{query: "SELECT nope FROM customers", field: "query", msg: []string{`"nope"`, "id, email, full_name, country, created_at"}},
		{query: "SELECT c.nope FROM customers c", field: "query", msg: []string{`"nope"`}},
		{query: "SELECT x.id FROM customers c", field: "query", msg: []string{`"x"`}},
		{query: "SELECT id, nope FROM orders o JOIN customers c ON true", field: "query", msg: []string{`"nope"`, "orders, customers"}},
		{query: "SELECT *", field: "query", msg: []string{"FROM"}},
		{query: "SELECT id", field: "query", msg: []string{"no FROM"}},
		{query: "SELECT * FROM generate_series(1, 3)", field: "query", msg: []string{"generate_series"}},
		{query: "SELECT * FROM customers; DELETE FROM customers", field: "query", msg: []string{"single statement"}},
		{query: "UPDATE customers SET email = ''", field: "query", msg: []string{"UPDATE"}},
		{query: "SELECT * FROM orders WHERE id = $2", params: []any{1}, field: "params", msg: []string{"2 positional"}},
		{query: "SELECT * FROM orders WHERE id = $1", params: map[string]any{"id": 1}, field: "params", msg: []string{"array"}},
		{query: "SELECT 1", limit: 21, field: "limit", msg: []string{"20"}},
		{query: "SELECT 1", limit: -1, field: "limit"},
	}
	for _, tt := range tests {
		_, err := Mock(cfg, Request{Query: tt.query, Params: tt.params, Limit: tt.limit})
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tt.field {
			t.Errorf("%q: %v, want a FieldError on %s", tt.query, err, tt.field)
			continue
		}
		for _, m := range tt.msg {
			if !strings.Contains(fe.Message, m) {
				t.Errorf("%q: message %q does not mention %s", tt.query, fe.Message, m)
			}
		}
	}
	res, err := Mock(cfg, Request{Query: "SELECT id FROM orders"})
	if err != nil || len(res.Rows) != 20 || !res.Truncated {
		t.Fatalf("max_rows bound: %v rows, truncated %v, %v", len(res.Rows), res.Truncated, err)
	}
}

func TestMockHTTP(t *testing.T) {
	t.Parallel()
	cfg, err := ParseConfig("http", map[string]any{"base_url": "https://catalog.example.com/api/v1/products"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Mock(cfg, Request{Query: "/?category=tea&limit=5"})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res.Columns); !reflect.DeepEqual(got, []string{"sku", "name", "category", "price", "stock"}) {
		t.Fatalf("default product fields %v", got)
	}
	if len(res.Rows) != 5 || res.Truncated {
		t.Fatalf("%d rows", len(res.Rows))
	}
	for _, row := range res.Rows {
		if row[2] != "tea" {
			t.Fatalf("category filter not applied: %v", row)
		}
		if _, ok := row[3].(float64); !ok {
			t.Fatalf("price %T", row[3])
		}
	}
	all, _ := Mock(cfg, Request{Query: "/products", Limit: 10})
	if len(all.Rows) != 10 || !all.Truncated {
		t.Fatalf("limit 10 of 25: %d rows truncated=%v", len(all.Rows), all.Truncated)
	}

	cfg, _ = ParseConfig("http", map[string]any{"sample_rows": float64(3), "sample_fields": []any{
		"id", map[string]any{"name": "title", "type": "string"}, "is_active", "updated_at"}})
	res, err = Mock(cfg, Request{Query: "/things"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 3 || res.Columns[0].Type != "integer" || res.Columns[2].Type != "boolean" || res.Columns[3].Type != "timestamp" {
		t.Fatalf("sample fields: %+v", res)
	}
	one, _ := Mock(cfg, Request{Query: "/things/2"})
	if len(one.Rows) != 1 || one.Rows[0][0] != int64(2) || !reflect.DeepEqual(one.Rows[0], res.Rows[1]) {
		t.Fatalf("item 2: %v vs %v", one.Rows, res.Rows[1])
	}
	if _, err := Mock(cfg, Request{Query: "https://evil.example/"}); err == nil {
		t.Fatal("absolute URL accepted")
	}
}
