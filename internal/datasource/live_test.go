package datasource

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/agentplane/agentplane/internal/dbtest"
)

// engine is a real database a data source of typ connects to with dsn.
type engine struct {
	typ      string
	dsn      string           // the database_url credential's value
	admin    *sql.DB          // a read-write connection to set the fixture up
	ph       func(int) string // the n-th placeholder (1-based)
	ddl      string           // CREATE TABLE orders …
	sleep    string           // a statement that runs for a long time
	readOnly string           // what the database says when refusing a write
}

var fixtureBase = time.Date(2025, 3, 1, 8, 0, 0, 0, time.UTC)

// engines lists SQLite always, PostgreSQL when TEST_DATABASE_URL is set and MySQL/MariaDB
// when TEST_MYSQL_URL is set (logging the skip otherwise), each with an orders table of 30
// rows.
func engines(t *testing.T) map[string]*engine {
	t.Helper()
	dollar := func(n int) string { return fmt.Sprintf("$%d", n) }
	qmark := func(int) string { return "?" }
	path := filepath.Join(t.TempDir(), "shop.db")
	out := map[string]*engine{"sqlite": {typ: "sqlite", dsn: path, ph: qmark,
		ddl: `CREATE TABLE orders (id integer PRIMARY KEY, status text NOT NULL, total numeric, placed_at timestamp, note text,
			paid boolean, meta json, raw blob, day date)`,
		sleep:    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
		readOnly: "readonly database"}}
	if u := dbtest.PostgresURL(t); u != "" {
		out["postgres"] = &engine{typ: "postgres", dsn: u, ph: dollar,
			ddl: `CREATE TABLE orders (id int PRIMARY KEY, status text NOT NULL, total numeric(10,2), placed_at timestamptz, note text,
				paid boolean, meta jsonb, raw bytea, day date)`,
			sleep: "SELECT pg_sleep(30)", readOnly: "read-only transaction"}
	} else {
		t.Log(dbtest.SkipMessage)
	}
	if u := dbtest.MySQLURL(t); u != "" {
		out["mysql"] = &engine{typ: "mysql", dsn: u, ph: qmark,
			ddl: `CREATE TABLE orders (id int PRIMARY KEY, status varchar(20) NOT NULL, total decimal(10,2), placed_at datetime(3), note text,
				paid boolean, meta json, raw varbinary(16), day date)`,
			sleep: "SELECT SLEEP(30)", readOnly: "READ ONLY"}
	} else {
		t.Log(dbtest.MySQLSkipMessage)
	}
	for _, e := range out {
		driver := map[string]string{"sqlite": "sqlite", "postgres": "pgx", "mysql": "mysql"}[e.typ]
		db, err := sql.Open(driver, e.dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		e.admin = db
		if _, err := db.Exec(e.ddl); err != nil {
			t.Fatalf("%s: %v", e.typ, err)
		}
		marks := make([]string, 9)
		for i := range marks {
			marks[i] = e.ph(i + 1)
		}
		ins := "INSERT INTO orders VALUES (" + strings.Join(marks, ", ") + ")"
		for i := 1; i <= 30; i++ {
			var note any = fmt.Sprintf("note %d", i)
			if i%5 == 0 {
				note = nil
			}
			placed := any(fixtureBase.Add(time.Duration(i) * time.Hour))
			if e.typ == "sqlite" {
				placed = fixtureBase.Add(time.Duration(i) * time.Hour).Format(time.RFC3339)
			}
			status := []string{"pending", "paid", "shipped"}[i%3]
			if _, err := db.Exec(ins, i, status, fmt.Sprintf("%d.50", 10+i), placed, note, i%2 == 0,
				fmt.Sprintf(`{"n": %d}`, i), []byte{0, byte(i)}, fixtureBase.AddDate(0, 0, i).Format(time.DateOnly)); err != nil {
				t.Fatalf("%s: %v", e.typ, err)
			}
		}
	}
	return out
}

func (e *engine) count(t *testing.T) int {
	t.Helper()
	var n int
	if err := e.admin.QueryRow("SELECT count(*) FROM orders").Scan(&n); err != nil {
		t.Fatalf("%s: %v", e.typ, err)
	}
	return n
}

// TestLiveEngines runs the same queries against every real engine: results and their JSON
// values, bound parameters, writes refused by the database, timeouts, row and byte caps, and
// the catalog.
func TestLiveEngines(t *testing.T) {
	for name, e := range engines(t) {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			l := f.live()
			ctx := context.Background()
			cred := f.credential("database_url", e.dsn, nil)
			id := f.source(e.typ, cred, map[string]any{"max_rows": float64(10)})
			query := func(q string, params any, limit int) (*Result, error) {
				return l.Query(ctx, testWS, id, Request{Query: q, Params: params, Limit: limit})
			}

			t.Run("results", func(t *testing.T) {
				res, err := query("SELECT id, status, total, placed_at, note, paid, meta, raw, day FROM orders WHERE id IN (4, 5) ORDER BY id", nil, 0)
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Rows) != 2 || res.Truncated || len(res.Columns) != 9 || res.Columns[0].Name != "id" || res.Columns[8].Name != "day" {
					t.Fatalf("%+v", res)
				}
				row := res.Rows[0]
				if row[0] != int64(4) || row[1] != "paid" || row[8] != "2025-03-05" || row[7] != "AAQ=" {
					t.Fatalf("row %#v", row)
				}
				if ts, err := time.Parse(time.RFC3339, row[3].(string)); err != nil || !ts.Equal(fixtureBase.Add(4*time.Hour)) {
					t.Fatalf("placed_at %v (%v)", row[3], err)
				}
				if res.Rows[1][4] != nil || row[4] != "note 4" {
					t.Fatalf("note %v, %v", row[4], res.Rows[1][4])
				}
				total, paid, meta := map[string]any{"postgres": "14.50", "mysql": "14.50", "sqlite": 14.5}[e.typ], row[5], row[6]
				if row[2] != total {
					t.Fatalf("total %#v, want %#v", row[2], total)
				}
				if paid != true && paid != int64(1) { // MySQL's boolean is tinyint(1)
					t.Fatalf("paid %#v", paid)
				}
				var m struct{ N int }
				switch x := meta.(type) {
				case json.RawMessage:
					_ = json.Unmarshal(x, &m)
				case string:
					_ = json.Unmarshal([]byte(x), &m)
				}
				if m.N != 4 {
					t.Fatalf("meta %#v", meta)
				}
				if _, err := json.Marshal(res.Rows); err != nil {
					t.Fatal(err)
				}
				if e.typ == "postgres" && (res.Columns[2].Type != "numeric" || res.Columns[3].Type != "timestamptz") {
					t.Fatalf("types %+v", res.Columns)
				}
			})

			t.Run("bound parameters", func(t *testing.T) {
				q := "SELECT count(*) AS n FROM orders WHERE status = " + e.ph(1) + " AND id > " + e.ph(2)
				res, err := query(q, []any{"paid", json.Number("10")}, 0)
				if err != nil {
					t.Fatal(err)
				}
				if n := fmt.Sprint(res.Rows[0][0]); n != "6" {
					t.Fatalf("count %s, want 6", n)
				}
				res, err = query(q, []any{"paid' OR '1'='1", float64(0)}, 0)
				if err != nil || fmt.Sprint(res.Rows[0][0]) != "0" {
					t.Fatalf("a quote in a parameter is data: %v %v", res, err)
				}
				res, err = query("SELECT id FROM orders WHERE id = "+e.ph(1), []any{float64(7)}, 0)
				if err != nil || len(res.Rows) != 1 || res.Rows[0][0] != int64(7) {
					t.Fatalf("numeric parameter: %+v %v", res, err)
				}
				res, err = query("SELECT count(*) FROM orders WHERE paid = "+e.ph(1)+" AND total > "+e.ph(2), []any{true, json.Number("20.5")}, 0)
				if err != nil || fmt.Sprint(res.Rows[0][0]) != "10" {
					t.Fatalf("boolean and decimal parameters: %+v %v", res, err)
				}
				_, err = query(q, []any{"paid"}, 0)
				wantQueryError(t, err, false)
				if e.typ != "sqlite" {
					_, err = query(q, map[string]any{"status": "paid"}, 0)
					wantFieldError(t, err, "params")
				}
			})

			t.Run("writes refused by the database", func(t *testing.T) {
				for _, w := range []string{
					"INSERT INTO orders (id, status) VALUES (100, 'x')",
					"UPDATE orders SET status = 'lost'",
					"DELETE FROM orders",
					"CREATE TABLE sneaky (id int)",
					"DROP TABLE orders",
				} {
					_, err := query(w, nil, 0)
					wantQueryError(t, err, false, e.readOnly)
				}
				if n := e.count(t); n != 30 {
					t.Fatalf("%d orders after the refused writes", n)
				}
				if e.typ != "sqlite" {
					_, err := query("SELECT 1; DELETE FROM orders", nil, 0)
					wantQueryError(t, err, false)
				}
			})

			t.Run("row and byte caps", func(t *testing.T) {
				res, err := query("SELECT id FROM orders ORDER BY id", nil, 0)
				if err != nil || len(res.Rows) != 10 || !res.Truncated || res.Rows[9][0] != int64(10) {
					t.Fatalf("max_rows: %+v %v", res, err)
				}
				res, err = query("SELECT id FROM orders ORDER BY id", nil, 4)
				if err != nil || len(res.Rows) != 4 || !res.Truncated {
					t.Fatalf("limit: %+v %v", res, err)
				}
				res, err = query("SELECT id FROM orders WHERE id <= 10", nil, 0)
				if err != nil || len(res.Rows) != 10 || res.Truncated {
					t.Fatalf("exactly max_rows is not truncated: %+v %v", res, err)
				}
				_, err = query("SELECT id FROM orders", nil, 11)
				wantFieldError(t, err, "limit")
				// The pool is fine after a query cut short.
				res, err = query("SELECT count(*) FROM orders", nil, 0)
				if err != nil || fmt.Sprint(res.Rows[0][0]) != "30" {
					t.Fatalf("after truncation: %+v %v", res, err)
				}
				f.promote(id, map[string]any{"max_rows": float64(1000), "max_bytes": float64(1024)})
				res, err = query("SELECT id, status, note, placed_at FROM orders ORDER BY id", nil, 0)
				if err != nil || !res.Truncated || len(res.Rows) == 0 || len(res.Rows) >= 30 {
					t.Fatalf("max_bytes: %d rows, truncated %v, %v", len(res.Rows), res != nil && res.Truncated, err)
				}
				if b, _ := json.Marshal(res.Rows); len(b) > 1024 {
					t.Fatalf("%d bytes of rows", len(b))
				}
			})

			t.Run("timeout", func(t *testing.T) {
				f.promote(id, map[string]any{"max_execution_ms": float64(300)})
				start := time.Now()
				_, err := query(e.sleep, nil, 0)
				wantQueryError(t, err, true, "timed out after 300 ms")
				if d := time.Since(start); d > 10*time.Second {
					t.Fatalf("the timeout took %v", d)
				}
				if res, err := query("SELECT count(*) FROM orders", nil, 0); err != nil || fmt.Sprint(res.Rows[0][0]) != "30" {
					t.Fatalf("after a timeout: %+v %v", res, err)
				}
			})

			t.Run("errors of the statement", func(t *testing.T) {
				_, err := query("SELECT * FROM invoices", nil, 0)
				wantQueryError(t, err, false, "invoices")
				_, err = query("SELEKT 1", nil, 0)
				wantQueryError(t, err, false)
				_, err = query("  ", nil, 0)
				wantFieldError(t, err, "query")
			})

			t.Run("catalog", func(t *testing.T) {
				// The timeout subtest left the source at 300 ms, which reading the catalog can
				// exceed on a loaded machine; this subtest is about the catalog, not the limit.
				f.promote(id, map[string]any{"max_execution_ms": float64(10_000)})
				tables, err := l.Describe(ctx, testWS, id)
				if err != nil {
					t.Fatal(err)
				}
				if len(tables) != 1 || tables[0].Name != "orders" || len(tables[0].Columns) != 9 || tables[0].Columns[0].Name != "id" ||
					tables[0].Columns[1].Nullable || !tables[0].Columns[4].Nullable {
					t.Fatalf("%+v", tables)
				}
				if _, err := e.admin.Exec("CREATE TABLE later (id int)"); err != nil {
					t.Fatal(err)
				}
				again, _ := l.Describe(ctx, testWS, id)
				if len(again) != 1 {
					t.Fatalf("the catalog is read once per pool: %+v", again)
				}
				f.promote(id, map[string]any{})
				fresh, err := l.Describe(ctx, testWS, id)
				if err != nil || len(fresh) != 2 {
					t.Fatalf("a new version reads the catalog again: %+v %v", fresh, err)
				}
			})
		})
	}
}
