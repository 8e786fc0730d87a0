package datasource

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckSQL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ, query string
		reject     string // substring of the error; "" means accepted
	}{
		{"postgres", "SELECT 1", ""},
		{"postgres", "select * from customers;", ""},
		{"postgres", "SELECT * FROM customers;;", ""},
		{"postgres", "  -- leading comment\nSELECT id FROM customers /* trailing */", ""},
		{"postgres", "WITH recent AS (SELECT * FROM orders) SELECT * FROM recent", ""},
		{"postgres", "(SELECT id FROM orders) UNION ALL (SELECT id FROM customers)", ""},
		{"postgres", "SELECT 'DROP TABLE x; DELETE FROM y' AS s", ""},
		{"postgres", `SELECT "update", "delete" FROM t`, ""},
		{"postgres", "SELECT $$ ; DROP TABLE x $$", ""},
		{"postgres", "SELECT $tag$ ; INSERT $tag$", ""},
		{"postgres", "SELECT /* ; DROP TABLE x */ 1", ""},
		{"postgres", "SELECT /* nested /* ; DROP */ still comment */ 1", ""},
		{"postgres", "SELECT replace(name, 'a', 'b') FROM t", ""},
		{"postgres", "SELECT * FROM t WHERE id = $1", ""},
		{"mysql", "SELECT `select` FROM `t` # comment ; DROP TABLE x", ""},
		{"mysql", "SELECT 1 -- comment; DROP", ""},
		{"sqlite", "SELECT [order] FROM [t]", ""},

		{"postgres", "", "is empty"},
		{"postgres", "  -- only a comment", "is empty"},
		{"postgres", "SELECT 1; SELECT 2", "single statement"},
		{"postgres", "SELECT 1; DROP TABLE customers", "single statement"},
		{"postgres", "DELETE FROM customers", "not DELETE"},
		{"postgres", "INSERT INTO t VALUES (1)", "not INSERT"},
		{"postgres", "UPDATE t SET a = 1", "not UPDATE"},
		{"postgres", "DROP TABLE t", "not DROP"},
		{"postgres", "TRUNCATE t", "not TRUNCATE"},
		{"postgres", "COPY t TO '/tmp/x'", "not COPY"},
		{"postgres", "GRANT ALL ON t TO bob", "not GRANT"},
		{"postgres", "EXPLAIN SELECT 1", "not EXPLAIN"},
		{"postgres", "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", "DELETE is not allowed"},
		{"postgres", "SELECT * INTO new_table FROM t", "INTO is not allowed"},
		{"postgres", "SELECT * FROM t FOR UPDATE", "UPDATE is not allowed"},
		{"postgres", "SELECT * FROM t FOR SHARE", "must not lock"},
		{"postgres", "SELECT pg_sleep(10)", "pg_sleep"},
		{"postgres", "SELECT nextval('s')", "nextval"},
		{"postgres", "SELECT * FROM query_to_xml('DELETE FROM t', true, true, '')", "query_to_xml"},
		{"postgres", "SELECT 'unterminated", "unterminated string"},
		{"postgres", "SELECT 1 /* open", "unterminated /*"},
		{"postgres", "SELECT (1", "unclosed"},
		{"postgres", "SELECT 1)", "unmatched"},
		{"postgres", "SELECT $$ open", "unterminated $$"},
		// With backslash escapes (old PostgreSQL settings) the string ends later; either reading must pass.
		{"postgres", `SELECT 'a\'; DROP TABLE t; --'`, "single statement"},
		{"postgres", `SELECT E'a\'; DROP TABLE t; --'`, ""},
		// MySQL: a backslash-escaped quote, read with and without NO_BACKSLASH_ESCAPES.
		{"mysql", `SELECT 'a\'; DROP TABLE t; -- '`, "single statement"},
		{"mysql", `SELECT "a\"; DROP TABLE t; -- "`, "single statement"},
		{"mysql", "SELECT 1 /*! ; DROP TABLE t */", "single statement"},
		{"mysql", "SELECT 1 /*!50000 , (DELETE) */", "DELETE"},
		{"mysql", "SELECT 1 /*M!100000 , (DELETE) */", "DELETE"},
		{"mysql", "SELECT * FROM t INTO OUTFILE '/tmp/x'", "INTO"},
		{"mysql", "SELECT sleep(5)", "sleep"},
		{"mysql", "REPLACE INTO t VALUES (1)", "not REPLACE"},
		{"mysql", "SELECT 1--1", ""},
		{"sqlite", "SELECT load_extension('x')", "load_extension"},
		{"sqlite", "PRAGMA table_info(t)", "not PRAGMA"},
		{"sqlite", "SELECT 1; ATTACH 'x' AS y", "single statement"},
	}
	for _, tt := range tests {
		err := CheckSQL(tt.typ, tt.query)
		if tt.reject == "" {
			if err != nil {
				t.Errorf("%s %q: rejected: %v", tt.typ, tt.query, err)
			}
			continue
		}
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Errorf("%s %q: accepted (or not a FieldError: %v), want rejection mentioning %q", tt.typ, tt.query, err, tt.reject)
			continue
		}
		if fe.Field != "query" || !strings.Contains(fe.Message, tt.reject) {
			t.Errorf("%s %q: %v, want field query and %q", tt.typ, tt.query, err, tt.reject)
		}
	}
}

func TestCheckPath(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"/", "/products", "/products?category=tea&limit=5", "/products/42"} {
		if _, err := CheckPath(ok); err != nil {
			t.Errorf("%q rejected: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "products", "http://evil.example/x", "//evil.example/x", "/a/../b", "/a b", `/a\b`, "/" + strings.Repeat("a", 2048)} {
		if _, err := CheckPath(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseConfig(t *testing.T) {
	t.Parallel()
	cfg, err := ParseConfig("postgres", map[string]any{
		"max_rows": float64(50),
		"tables": []any{map[string]any{"name": "t", "row_count": float64(3), "columns": []any{
			map[string]any{"name": "id", "type": "integer"}, map[string]any{"name": "note", "nullable": true},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxRows != 50 || cfg.Tables[0].RowCount != 3 || cfg.Tables[0].Columns[1].Type != "string" || !cfg.Tables[0].Columns[1].Nullable {
		t.Fatalf("parsed %+v", cfg)
	}
	if cfg, _ := ParseConfig("http", nil); cfg.MaxRows != DefaultMaxRows || cfg.SampleRows != defaultSampleRows {
		t.Fatalf("defaults %+v", cfg)
	}
	bad := []struct {
		raw   map[string]any
		field string
	}{
		{map[string]any{"max_rows": float64(0)}, "config.max_rows"},
		{map[string]any{"max_rows": 1.5}, "config.max_rows"},
		{map[string]any{"max_rows": "10"}, "config.max_rows"},
		{map[string]any{"timeout_ms": float64(-1)}, "config.timeout_ms"},
		{map[string]any{"base_url": "ftp://x"}, "config.base_url"},
		{map[string]any{"tables": "customers"}, "config.tables"},
		{map[string]any{"tables": []any{map[string]any{"columns": []any{}}}}, "config.tables[0].name"},
		{map[string]any{"tables": []any{map[string]any{"name": "t"}}}, "config.tables[0].columns"},
		{map[string]any{"tables": []any{map[string]any{"name": "t", "columns": []any{}}}}, "config.tables[0].columns"},
		{map[string]any{"tables": []any{map[string]any{"name": "t", "columns": []any{"id"}}}}, "config.tables[0].columns[0]"},
		{map[string]any{"tables": []any{map[string]any{"name": "t", "columns": []any{map[string]any{"name": "id", "type": 3}}}}}, "config.tables[0].columns[0].type"},
		{map[string]any{"tables": []any{map[string]any{"name": "t", "columns": []any{map[string]any{"name": "a"}, map[string]any{"name": "A"}}}}}, "config.tables[0].columns[1].name"},
		{map[string]any{"tables": []any{map[string]any{"name": "t", "columns": []any{map[string]any{"name": "a"}}}, map[string]any{"name": "T", "columns": []any{map[string]any{"name": "a"}}}}}, "config.tables[1].name"},
		{map[string]any{"sample_fields": []any{3}}, "config.sample_fields[0]"},
	}
	for _, b := range bad {
		_, err := ParseConfig("postgres", b.raw)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != b.field {
			t.Errorf("%v: got %v, want a FieldError on %s", b.raw, err, b.field)
		}
	}
}
