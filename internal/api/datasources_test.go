package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/api/openapicheck"
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
	cred, err := e.c.CredentialCreate(ctx, client.CredentialCreate{Name: "Orders DB URL", Type: "database_url", Value: "postgres://ro:pw@db/orders"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := e.c.DataSourceCreate(ctx, client.DataSourceCreate{Name: "Customer orders DB", Type: "postgres", Description: "Read-only replica",
		CredentialID: cred.ID, Config: ordersConfig(), Notes: "initial"})
	if err != nil {
		t.Fatal(err)
	}
	if d.ActiveVersion == nil || *d.ActiveVersion != 1 || d.VersionCount != 1 || d.Config["host"] != "orders-replica.db.example.internal" ||
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
	d, err := e.c.DataSourceCreate(ctx, client.DataSourceCreate{Name: "Orders", Type: "postgres", Config: ordersConfig()})
	if err != nil {
		t.Fatal(err)
	}
	api, err := e.c.DataSourceCreate(ctx, client.DataSourceCreate{Name: "Catalog", Type: "http",
		Config: map[string]any{"base_url": "https://catalog.example.com/api/v1/products", "method": "GET"}})
	if err != nil {
		t.Fatal(err)
	}
	my, err := e.c.DataSourceCreate(ctx, client.DataSourceCreate{Name: "Legacy", Type: "mysql", Config: ordersConfig()})
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
			fields: map[string]any{"data.columns.0": map[string]any{"name": "n", "type": "bigint"}, "data.rows": [][]any{{250}}}},
		{name: "literals in strings and comments are not statements", method: "POST", path: q,
			body: body(map[string]any{"query": "-- DROP TABLE customers;\nSELECT id, 'DELETE FROM x; DROP' AS note FROM customers /* ; UPDATE */ LIMIT 1"}), status: 200,
			fields: map[string]any{"data.rows.0": []any{1, "DELETE FROM x; DROP"}}},
		{name: "delete rejected", method: "POST", path: q, body: `{"query":"DELETE FROM customers"}`, status: 422, code: "validation_error", message: "query"},
		{name: "update rejected", method: "POST", path: q, body: `{"query":"UPDATE customers SET email = 'x'"}`, status: 422, message: "query"},
		{name: "insert rejected", method: "POST", path: q, body: `{"query":"insert into customers (id) values (1)"}`, status: 422, message: "query"},
		{name: "drop rejected", method: "POST", path: q, body: `{"query":"DROP TABLE customers"}`, status: 422, message: "query"},
		{name: "truncate rejected", method: "POST", path: q, body: `{"query":"TRUNCATE orders"}`, status: 422, message: "query"},
		{name: "write in CTE rejected", method: "POST", path: q, body: `{"query":"WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d"}`, status: 422, message: "DELETE"},
		{name: "select into rejected", method: "POST", path: q, body: `{"query":"SELECT * INTO copy FROM orders"}`, status: 422, message: "INTO"},
		{name: "multiple statements rejected", method: "POST", path: q, body: `{"query":"SELECT 1; SELECT 2"}`, status: 422, message: "single statement"},
		{name: "hidden second statement rejected", method: "POST", path: q, body: `{"query":"SELECT * FROM customers; DROP TABLE customers; --"}`, status: 422, message: "single statement"},
		{name: "unknown table", method: "POST", path: q, body: `{"query":"SELECT * FROM invoices"}`, status: 422, message: `"invoices"`,
			check: func(t *testing.T, b map[string]any) {
				if m := b["message"].(string); !strings.Contains(m, "customers, orders") || !strings.HasPrefix(m, "query:") {
					t.Fatalf("message %q", m)
				}
			}},
		{name: "unknown column", method: "POST", path: q, body: `{"query":"SELECT id, phone FROM customers"}`, status: 422, message: `"phone"`},
		{name: "missing params", method: "POST", path: q, body: `{"query":"SELECT * FROM orders WHERE id = $1"}`, status: 422, message: "params"},
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
			status: 422, message: "single statement"},
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
	if _, err := e.c.DataSourceQuery(ctx, d.ID, client.DataSourceQuery{Query: "SELECT * FROM events"}); !isStatus(err, 422) {
		t.Fatalf("events before promotion: %v", err)
	}
	if _, err := e.c.DataSourceVersionPromote(ctx, d.ID, v.ID); err != nil {
		t.Fatal(err)
	}
	res, err := e.c.DataSourceQuery(ctx, d.ID, client.DataSourceQuery{Query: "SELECT * FROM events"})
	if err != nil {
		t.Fatal(err)
	}
	if res.RowCount != 3 || !res.Truncated || len(res.Columns) != 2 || res.Columns[0].Type != "bigint" {
		t.Fatalf("after promotion: %+v", res)
	}
	if _, err := e.c.DataSourceQuery(ctx, d.ID, client.DataSourceQuery{Query: "SELECT * FROM customers"}); !isStatus(err, 422) {
		t.Fatalf("customers after promotion: %v", err)
	}
}

func isStatus(err error, status int) bool {
	ae, ok := err.(*client.Error)
	return ok && ae.Status == status
}

// TestDataSourceQueryOnServer: outside the emulator queries are validated the same way, then
// answered 501 until live connections exist.
func TestDataSourceQueryOnServer(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "memory")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := newTestEnvOn(t, st, false)
	d, err := e.c.DataSourceCreate(ctx, client.DataSourceCreate{Name: "Orders", Type: "postgres", Config: ordersConfig()})
	if err != nil {
		t.Fatal(err)
	}
	q := "/api/v1/data-sources/" + d.ID + "/query"
	e.run([]scenario{
		{name: "not implemented", method: "POST", path: q, body: `{"query":"SELECT * FROM customers"}`, status: 501, code: "not_implemented", message: "not available on this server"},
		{name: "still read-only", method: "POST", path: q, body: `{"query":"DELETE FROM customers"}`, status: 422, message: "query"},
		{name: "still bounded", method: "POST", path: q, body: `{"query":"SELECT 1","limit":1000}`, status: 422, message: "limit"},
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

	// The server's 501 is documented.
	st, err := store.Open(ctx, "memory")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv := newTestEnvOn(t, st, false)
	ds, err := srv.c.DataSourceCreate(ctx, client.DataSourceCreate{Name: "db", Type: "sqlite"})
	if err != nil {
		t.Fatal(err)
	}
	path := "/api/v1/data-sources/" + ds.ID + "/query"
	status, resp, _, err := srv.c.Raw(ctx, http.MethodPost, path, []byte(`{"query":"SELECT 1"}`), nil)
	if err != nil || status != 501 {
		t.Fatalf("%d %s %v", status, resp, err)
	}
	var served struct {
		Paths map[string]map[string]struct {
			Responses map[string]any `json:"responses"`
		} `json:"paths"`
	}
	mustJSON(t, json.RawMessage(srv.srv.OpenAPI()), &served)
	if served.Paths["/api/v1/data-sources/{id}/query"]["post"].Responses["501"] == nil {
		t.Fatal("the 501 of queryDataSource is not documented")
	}
}
