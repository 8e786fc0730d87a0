package datasource

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

// catalogAPI is a small JSON API: /products lists products (filtered by ?category=), /wrapped
// wraps them in {"data": …}, /one is one object, /count a number, /echo answers the request
// it got, /slow takes a while, /big is large, /fail fails, /missing is 404, /moved redirects.
func catalogAPI(t *testing.T) *httptest.Server {
	products := []map[string]any{
		{"sku": "TEA-1", "name": "Sencha", "category": "tea", "price": 12.5, "stock": 40},
		{"sku": "COF-1", "name": "Espresso", "category": "coffee", "price": 18, "stock": 0, "tags": []string{"dark"}},
		{"sku": "TEA-2", "name": "Earl Grey", "category": "tea", "price": 9.25, "stock": 12},
	}
	mux := http.NewServeMux()
	write := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("GET /api/products", func(w http.ResponseWriter, r *http.Request) {
		out := []map[string]any{}
		for _, p := range products {
			if c := r.URL.Query().Get("category"); c == "" || p["category"] == c {
				out = append(out, p)
			}
		}
		write(w, out)
	})
	mux.HandleFunc("GET /api/wrapped", func(w http.ResponseWriter, r *http.Request) { write(w, map[string]any{"data": products, "total": 3}) })
	mux.HandleFunc("GET /api/one", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"sku": "TEA-1", "name": "Sencha", "price": 12.5, "meta": {"origin": "JP"}}`) // keys out of order
	})
	mux.HandleFunc("GET /api/count", func(w http.ResponseWriter, r *http.Request) { write(w, 3) })
	mux.HandleFunc("/api/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		write(w, map[string]any{"method": r.Method, "query": r.URL.RawQuery, "authorization": r.Header.Get("Authorization"),
			"x_api_key": r.Header.Get("X-Api-Key"), "x_tenant": r.Header.Get("X-Tenant"), "body": string(body)})
	})
	mux.HandleFunc("GET /api/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	mux.HandleFunc("GET /api/big", func(w http.ResponseWriter, r *http.Request) { write(w, strings.Repeat("x", 4096)) })
	mux.HandleFunc("GET /api/fail", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "database down", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("GET /api/html", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "<html>hi</html>") })
	mux.HandleFunc("GET /api/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/api/one", http.StatusFound) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestLiveHTTP(t *testing.T) {
	api := catalogAPI(t)
	f := newFixture(t)
	l := f.live()
	ctx := context.Background()
	id := f.source("http", "", map[string]any{"base_url": api.URL + "/api", "headers": map[string]any{"X-Tenant": "acme"},
		"max_rows": float64(2), "timeout_ms": float64(300)})
	q := func(id, query string, params any, limit int) (*Result, error) {
		return l.Query(ctx, testWS, id, Request{Query: query, Params: params, Limit: limit})
	}

	res, err := q(id, "/products?category=tea", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []Column{{"category", "string"}, {"name", "string"}, {"price", "number"}, {"sku", "string"}, {"stock", "integer"}}
	if !reflect.DeepEqual(res.Columns, want) || len(res.Rows) != 2 || res.Truncated || res.Rows[1][1] != "Earl Grey" {
		t.Fatalf("%+v", res)
	}
	res, err = q(id, "/products", nil, 0)
	if err != nil || len(res.Rows) != 2 || !res.Truncated || len(res.Columns) != 6 || res.Columns[5] != (Column{"tags", "array"}) || res.Rows[0][5] != nil {
		t.Fatalf("max_rows and the union of keys: %+v %v", res, err)
	}
	res, err = q(id, "/products", map[string]any{"category": "coffee"}, 1)
	if err != nil || len(res.Rows) != 1 || res.Rows[0][3] != "COF-1" || res.Truncated {
		t.Fatalf("params as query parameters: %+v %v", res, err)
	}
	if res, err = q(id, "/wrapped", nil, 0); err != nil || len(res.Rows) != 2 || res.Columns[3].Name != "sku" {
		t.Fatalf("envelope: %+v %v", res, err)
	}
	res, err = q(id, "/one", nil, 0)
	if err != nil || !reflect.DeepEqual(res.Columns, []Column{{"sku", "string"}, {"name", "string"}, {"price", "number"}, {"meta", "object"}}) ||
		len(res.Rows) != 1 || res.Rows[0][0] != "TEA-1" || !reflect.DeepEqual(res.Rows[0][3], map[string]any{"origin": "JP"}) {
		t.Fatalf("one object, keys in document order: %+v %v", res, err)
	}
	if res, err = q(id, "/count", nil, 0); err != nil || res.Columns[0] != (Column{"value", "integer"}) || res.Rows[0][0] != json.Number("3") {
		t.Fatalf("a scalar: %+v %v", res, err)
	}

	_, err = q(id, "/slow", nil, 0)
	wantQueryError(t, err, true, "timed out after 300 ms")
	_, err = q(id, "/missing", nil, 0)
	wantQueryError(t, err, false, "404")
	_, err = q(id, "/moved", nil, 0)
	wantQueryError(t, err, false, "302")
	_, err = q(id, "/html", nil, 0)
	wantQueryError(t, err, false, "did not answer JSON")
	_, err = q(id, "/fail", nil, 0)
	wantSourceError(t, err, true, "database down")
	_, err = q(id, "/products", []any{1}, 0)
	wantFieldError(t, err, "params")
	_, err = q(id, "http://169.254.169.254/latest", nil, 0)
	wantFieldError(t, err, "query")

	small := f.source("http", "", map[string]any{"base_url": api.URL + "/api", "max_bytes": float64(1024)})
	_, err = q(small, "/big", nil, 0)
	wantQueryError(t, err, false, "max_bytes")

	// Credentials: bearer, api_key in its header (with a scheme), basic; POST sends params as
	// the JSON body; the config's query parameters come with every request.
	echo := func(credID, method string, params any) map[string]any {
		t.Helper()
		cfg := map[string]any{"base_url": api.URL + "/api?tenant=acme", "headers": map[string]any{"X-Tenant": "acme"}, "query": map[string]any{"v": "2"}}
		if method != "" {
			cfg["method"] = method
		}
		res, err := q(f.source("http", credID, cfg), "/echo?x=1", params, 0)
		if err != nil {
			t.Fatal(err)
		}
		row := map[string]any{}
		for i, c := range res.Columns {
			row[c.Name] = res.Rows[0][i]
		}
		return row
	}
	if r := echo(f.credential("bearer_token", "tok-1", nil), "", nil); r["authorization"] != "Bearer tok-1" || r["x_tenant"] != "acme" || r["query"] != "tenant=acme&v=2&x=1" {
		t.Fatalf("bearer: %v", r)
	}
	if r := echo(f.credential("api_key", "k-2", map[string]any{"header": "X-API-Key"}), "", nil); r["x_api_key"] != "k-2" || r["authorization"] != "" {
		t.Fatalf("api key: %v", r)
	}
	if r := echo(f.credential("api_key", "k-3", map[string]any{"header": "Authorization", "scheme": "Token"}), "", nil); r["authorization"] != "Token k-3" {
		t.Fatalf("api key with a scheme: %v", r)
	}
	if r := echo(f.credential("basic_auth", "ada:pw", nil), "", nil); r["authorization"] != "Basic YWRhOnB3" {
		t.Fatalf("basic: %v", r)
	}
	if r := echo("", "POST", map[string]any{"sku": "TEA-1", "qty": json.Number("2")}); r["method"] != "POST" || r["body"] != `{"qty":2,"sku":"TEA-1"}` {
		t.Fatalf("POST body: %v", r)
	}
	_, err = q(f.source("http", f.credential("database_url", "postgres://x", nil), map[string]any{"base_url": api.URL}), "/api/one", nil, 0)
	wantSourceError(t, err, false, "database_url")
	_, err = q(f.source("http", "", map[string]any{}), "/one", nil, 0)
	wantSourceError(t, err, false, "base_url")
	if tables, err := l.Describe(ctx, testWS, id); err != nil || len(tables) != 0 {
		t.Fatalf("describe http: %v %v", tables, err)
	}
}

func TestCheckPathRejects(t *testing.T) {
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
