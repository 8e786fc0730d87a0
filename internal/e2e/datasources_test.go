package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/dbtest"
)

// seedOrdersDB is the seed's "Customer orders DB" (postgres, with sample tables).
const seedOrdersDB = "2rfFqMzi2iDnN9XlC8v1APMzpRt"

// TestEmulatorSeedDataSources: the emulator answers the seed's data sources with real SQL
// over their sample tables (schema-qualified names included), and its http source with items.
func TestEmulatorSeedDataSources(t *testing.T) {
	t.Parallel()
	c := start(t, emulatorEnv(nil), "emulator").C
	ctx := context.Background()
	res, err := c.DataSourceQuery(ctx, seedOrdersDB, client.DataSourceQueryRequest{Query: `
		SELECT c.country, count(*) AS orders, sum(o.total_cents) AS cents
		FROM public.orders o JOIN customers c ON c.id = o.customer_id
		WHERE o.status <> $1 GROUP BY c.country ORDER BY orders DESC, c.country`, Params: params("cancelled")})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Columns) != 3 || res.Columns[0].Name != "country" || res.RowCount == 0 || res.RowCount != int64(len(res.Rows)) {
		t.Fatalf("%+v", res)
	}
	all, err := c.DataSourceQuery(ctx, seedOrdersDB, client.DataSourceQueryRequest{Query: "SELECT count(*) FROM orders WHERE status <> 'cancelled'"})
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, r := range res.Rows {
		sum += r[1].(float64)
	}
	if sum != all.Rows[0][0].(float64) {
		t.Fatalf("the groups hold %v orders, the count says %v", sum, all.Rows[0][0])
	}
	_, err = c.DataSourceQuery(ctx, seedOrdersDB, client.DataSourceQueryRequest{Query: "DELETE FROM orders"})
	if ae := apiErr(t, err, 422); !strings.Contains(ae.Message, "readonly") {
		t.Fatalf("delete: %v", ae)
	}
	items, err := c.DataSourceQuery(ctx, "2rfFqPxUWwHPsY2EGYmodkbhPGI", client.DataSourceQueryRequest{Query: "/?category=tea&limit=3"})
	if err != nil || items.RowCount != 3 || items.Columns[0].Name != "sku" {
		t.Fatalf("http seed source: %+v %v", items, err)
	}
}

// TestServeDataSources: `serve` queries the data sources themselves, through the SDK: a
// SQLite file always, and a PostgreSQL database with a database_url credential when
// TEST_DATABASE_URL is set.
func TestServeDataSources(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	p := start(t, serveEnv(dataDir), "serve")
	ctx := context.Background()
	c := p.C

	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "shop.db")
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("CREATE TABLE items (id integer, name text); INSERT INTO items VALUES (1, 'tea'), (2, 'coffee'), (3, 'cocoa')"); err != nil {
			t.Fatal(err)
		}
		db.Close()
		d, err := c.DataSourceCreate(ctx, client.DataSourceCreateRequest{Name: "Shop file", Type: "sqlite", Config: map[string]any{"path": path, "max_rows": 2}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.DataSourceQuery(ctx, d.ID, client.DataSourceQueryRequest{Query: "SELECT name FROM items WHERE id >= ? ORDER BY id", Params: params(1)})
		if err != nil || res.RowCount != 2 || !res.Truncated || res.Rows[1][0] != "coffee" {
			t.Fatalf("%+v %v", res, err)
		}
		_, err = c.DataSourceQuery(ctx, d.ID, client.DataSourceQueryRequest{Query: "DELETE FROM items"})
		apiErr(t, err, 422)
		// The server's own database is not a data source.
		own, err := c.DataSourceCreate(ctx, client.DataSourceCreateRequest{Name: "Own", Type: "sqlite", Config: map[string]any{"path": filepath.Join(dataDir, "agentplane.db")}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.DataSourceQuery(ctx, own.ID, client.DataSourceQueryRequest{Query: "SELECT * FROM api_keys"})
		if ae := apiErr(t, err, 409); !strings.Contains(ae.Message, "data directory") {
			t.Fatalf("own database: %v", ae)
		}
	})

	t.Run("postgres", func(t *testing.T) {
		url := dbtest.PostgresURL(t)
		if url == "" {
			t.Skip(dbtest.SkipMessage)
		}
		admin, err := sql.Open("pgx", url)
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		if _, err := admin.Exec(`CREATE TABLE customers (id int PRIMARY KEY, email text, balance numeric(10,2));
			INSERT INTO customers SELECT g, 'c' || g || '@example.com', g * 1.5 FROM generate_series(1, 40) g`); err != nil {
			t.Fatal(err)
		}
		cred, err := c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "CRM", Type: "database_url", Value: url})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(cred.MaskedValue, "postgres://") {
			t.Fatalf("the credential is shown: %s", cred.MaskedValue)
		}
		d, err := c.DataSourceCreate(ctx, client.DataSourceCreateRequest{Name: "CRM", Type: "postgres", CredentialID: cred.ID,
			Config: map[string]any{"max_rows": 25, "max_execution_ms": 2000}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.DataSourceQuery(ctx, d.ID, client.DataSourceQueryRequest{Query: "SELECT id, email, balance FROM customers WHERE id > $1 ORDER BY id", Params: params(35)})
		if err != nil || res.RowCount != 5 || res.Truncated || res.Rows[0][1] != "c36@example.com" || res.Rows[0][2] != "54.00" ||
			res.Columns[2] != (client.DataSourceColumn{Name: "balance", Type: "numeric"}) {
			t.Fatalf("%+v %v", res, err)
		}
		if res, err = c.DataSourceQuery(ctx, d.ID, client.DataSourceQueryRequest{Query: "SELECT id FROM customers"}); err != nil || res.RowCount != 25 || !res.Truncated {
			t.Fatalf("max_rows: %+v %v", res, err)
		}
		_, err = c.DataSourceQuery(ctx, d.ID, client.DataSourceQueryRequest{Query: "UPDATE customers SET balance = 0"})
		if ae := apiErr(t, err, 422); !strings.Contains(ae.Message, "read-only transaction") {
			t.Fatalf("update: %v", ae)
		}
		_, err = c.DataSourceQuery(ctx, d.ID, client.DataSourceQueryRequest{Query: "SELECT pg_sleep(10)"})
		if ae := apiErr(t, err, 422); !strings.Contains(ae.Message, "timed out after 2000 ms") {
			t.Fatalf("timeout: %v", ae)
		}
		var ae *client.Error
		if _, err := c.DataSourceQuery(ctx, d.ID, client.DataSourceQueryRequest{Query: "SELECT 1", Limit: 26}); !errors.As(err, &ae) || ae.Status != 422 {
			t.Fatalf("limit over max_rows: %v", err)
		}
	})
}

// params encodes a query's parameters for DataSourceQueryRequest.Params.
func params(values ...any) json.RawMessage {
	b, err := json.Marshal(values)
	if err != nil {
		panic(err)
	}
	return b
}
