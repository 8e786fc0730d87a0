package bench

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"testing"

	_ "modernc.org/sqlite" // the "sqlite" driver, to read dbstat

	"github.com/agentplane/agentplane/internal/cli"
	"github.com/agentplane/agentplane/internal/dbtest"
)

// tableSizes returns the bytes each table of the database holds, its indexes (and on
// PostgreSQL its TOAST) included: on PostgreSQL pg_total_relation_size of the tables of the
// URL's schema, on SQLite the pages dbstat counts per table and index.
type tableSizes func(b *testing.B) map[string]int64

func pgTableSizes(pgURL string) tableSizes {
	return func(b *testing.B) map[string]int64 {
		return querySizes(b, "pgx", pgURL, `SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c
			JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'`)
	}
}

func sqliteTableSizes(path string) tableSizes {
	return func(b *testing.B) map[string]int64 {
		return querySizes(b, "sqlite", "file:"+path+"?mode=ro", `SELECT COALESCE(m.tbl_name, d.name), SUM(d.pgsize) FROM dbstat d
			LEFT JOIN sqlite_master m ON m.name = d.name GROUP BY 1`)
	}
}

func querySizes(b *testing.B, driver, dsn, q string) map[string]int64 {
	b.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(q)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			b.Fatal(err)
		}
		out[name] = n
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return out
}

// runSync sends runs sync executes to url from 8 callers; every answer must be 200.
func runSync(b *testing.B, url string, body []byte, runs int) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			hc := &http.Client{}
			for next.Add(1) <= int64(runs) {
				resp, err := hc.Post(url, "application/json", bytes.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Errorf("execute: %s", resp.Status)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkRunBytes runs simple sync executes (zero-latency simulated model) through `serve`'s
// HTTP API, on SQLite and, with TEST_DATABASE_URL, on PostgreSQL, and reports the bytes each
// run adds to each table (indexes and TOAST included; tables that did not grow are left out)
// and in all (goal: at most 3 KB per run on both databases). The sizes are the files' pages,
// so rows updated in place leave their dead versions counted until a vacuum reuses them, as a
// busy server sees them.
//
//	TEST_DATABASE_URL=postgres://… go test ./bench -run '^$' -bench RunBytes -benchtime 1x
func BenchmarkRunBytes(b *testing.B) {
	const runs = 1000
	body := []byte(`{"input":{"message":"How long does shipping to Canada take?"}}`)
	dbs := []struct{ name, dir, url string }{{name: "sqlite", dir: b.TempDir()}}
	if u := dbtest.PostgresURL(b); u != "" {
		dbs = append(dbs, struct{ name, dir, url string }{"pg", b.TempDir(), u})
	}
	for _, d := range dbs {
		ctx := context.Background()
		srv, err := cli.NewServer(ctx, quietLog(), io.Discard, cli.ServerConfig{DB: cli.ServerDB(d.dir, d.url), Workers: 16, Models: cli.ModelsSimulated})
		if err != nil {
			b.Fatal(err)
		}
		ts := httptest.NewServer(withKey(srv.Handler, srv.BootstrapKey))
		url := ts.URL + "/api/v1/agents/" + zeroLatencyAgent(b, ts.URL) + "/execute"
		sizes := sqliteTableSizes(filepath.Join(d.dir, "agentplane.db"))
		if d.url != "" {
			sizes = pgTableSizes(d.url)
		}
		runSync(b, url, body, 50) // every table past its first pages
		var grew map[string]int64
		for range b.N {
			before := sizes(b)
			runSync(b, url, body, runs)
			after := sizes(b)
			grew = map[string]int64{}
			for t, n := range after {
				if n > before[t] {
					grew[t] = n - before[t]
				}
			}
		}
		ts.Close()
		srv.Close(ctx)
		var total int64
		names := make([]string, 0, len(grew))
		for t, n := range grew {
			total += n
			names = append(names, t)
		}
		sort.Strings(names)
		for _, t := range names {
			b.ReportMetric(float64(grew[t])/runs, fmt.Sprintf("%s_%s_B/run", d.name, t))
		}
		b.ReportMetric(float64(total)/runs, d.name+"_total_B/run")
	}
}
