package bench

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver, to read dbstat

	"github.com/agentplane/agentplane/internal/cli"
	"github.com/agentplane/agentplane/internal/dbtest"
)

// sizer measures the bytes each table of a database holds, its indexes (and on PostgreSQL its
// TOAST) included: on PostgreSQL pg_total_relation_size of the tables of the URL's schema, on
// SQLite the pages dbstat counts per table and index. compact rewrites the tables without
// their free space (PostgreSQL: VACUUM FULL of each table of the schema, so dead row versions
// go; SQLite: VACUUM).
type sizer struct {
	driver, dsn, sizes string
	compact            func(db *sql.DB) error
}

func pgSizer(pgURL string) sizer {
	return sizer{driver: "pgx", dsn: pgURL, sizes: `SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'`,
		compact: func(db *sql.DB) error {
			if err := waitOldTransactions(db, 15*time.Minute); err != nil {
				return err
			}
			rows, err := db.Query("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
			if err != nil {
				return err
			}
			var tables []string
			for rows.Next() {
				var t string
				_ = rows.Scan(&t)
				tables = append(tables, t)
			}
			rows.Close()
			for _, t := range tables {
				if _, err := db.Exec("VACUUM FULL " + t); err != nil {
					return err
				}
			}
			return nil
		}}
}

// waitOldTransactions waits, up to limit, until no other session of the server (of any of its
// databases) has held a transaction open for 2 seconds or more: VACUUM FULL keeps the dead row
// versions such a transaction may still see (another test's long bulk load doubled the
// executions' bytes here), and the measure would count them.
func waitOldTransactions(db *sql.DB, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		var pid int
		var query string
		err := db.QueryRow(`SELECT pid, left(query, 100) FROM pg_stat_activity WHERE pid <> pg_backend_pid()
			AND (backend_xid IS NOT NULL OR backend_xmin IS NOT NULL) AND xact_start < now() - interval '2 seconds' LIMIT 1`).Scan(&pid, &query)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("a transaction of session %d (%s) is open for longer than %s: VACUUM FULL could not remove dead rows", pid, query, limit)
		}
		time.Sleep(time.Second)
	}
}

func sqliteSizer(path string) sizer {
	return sizer{driver: "sqlite", dsn: "file:" + path + "?_pragma=busy_timeout(10000)", sizes: `SELECT COALESCE(m.tbl_name, d.name), SUM(d.pgsize)
		FROM dbstat d LEFT JOIN sqlite_master m ON m.name = d.name GROUP BY 1`,
		compact: func(db *sql.DB) error { _, err := db.Exec("VACUUM"); return err }}
}

// measure returns the bytes of each table, compacted first when compact is set.
func (z sizer) measure(b *testing.B, compact bool) map[string]int64 {
	b.Helper()
	db, err := sql.Open(z.driver, z.dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if compact {
		if err := z.compact(db); err != nil {
			b.Fatal(err)
		}
	}
	rows, err := db.Query(z.sizes)
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
// run keeps in each table (indexes and TOAST included, the tables compacted before and after;
// tables that did not grow are left out) and in all (goal: at most 3 KB per run on both
// databases), and how much the files grew per run before compaction (grown_total: on
// PostgreSQL the dead row versions of updates, until a vacuum reuses their space). On
// PostgreSQL each compaction first waits for the server's long transactions to end (see
// waitOldTransactions).
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
		z := sqliteSizer(filepath.Join(d.dir, "agentplane.db"))
		if d.url != "" {
			z = pgSizer(d.url)
		}
		runSync(b, url, body, 50) // every table past its first pages
		var grew map[string]int64
		var grown int64
		for range b.N {
			before := z.measure(b, true)
			runSync(b, url, body, runs)
			grown = 0
			for t, n := range z.measure(b, false) {
				grown += n - before[t]
			}
			grew = map[string]int64{}
			for t, n := range z.measure(b, true) {
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
		b.ReportMetric(float64(grown)/runs, d.name+"_grown_total_B/run")
	}
}
