package bench

import (
	"context"
	"database/sql"
	"io"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/segmentio/ksuid"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/cli"
)

// pgSchemaURL returns TEST_DATABASE_URL pointed at a fresh schema (dropped at the end), or "".
func pgSchemaURL(b *testing.B) string {
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		return ""
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	schema := "bench_" + strings.ToLower(ksuid.New().String())
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if a, err := sql.Open("pgx", base); err == nil {
			_, _ = a.Exec("DROP SCHEMA " + schema + " CASCADE")
			a.Close()
		}
	})
	u, _ := url.Parse(base)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// authedServer starts `serve` in-process on dataDir (or a PostgreSQL URL) with six agents,
// every request carrying its bootstrap key.
func authedServer(b *testing.B, dataDir, dbURL string) *httptest.Server {
	ctx := context.Background()
	srv, err := cli.NewServer(ctx, quietLog(), io.Discard, cli.ServerConfig{DB: cli.ServerDB(dataDir, dbURL), Workers: 16})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close(ctx) })
	ts := httptest.NewServer(withKey(srv.Handler, srv.BootstrapKey))
	b.Cleanup(ts.Close)
	c := client.New(ts.URL)
	for range 6 {
		if _, err := c.AgentCreate(ctx, client.AgentCreate{Name: "Agent", Type: "simple", Config: &client.AgentConfig{Model: "gpt-4o-mini"}}); err != nil {
			b.Fatal(err)
		}
	}
	return ts
}

// BenchmarkAuthenticatedList compares authenticated GET /api/v1/agents on `serve` (SQLite,
// and PostgreSQL when TEST_DATABASE_URL is set) with the unauthenticated emulator and a bare
// net/http JSON handler, all at 64 connections (goal: SQLite >= 0.4 of bare).
func BenchmarkAuthenticatedList(b *testing.B) {
	const conns = 64
	d := 3 * time.Second
	bare := bareServer()
	defer bare.Close()
	emu := emulatorServer(b)
	defer emu.Close()
	lite := authedServer(b, b.TempDir(), "")
	var pg *httptest.Server
	if u := pgSchemaURL(b); u != "" {
		pg = authedServer(b, b.TempDir(), u)
	}
	for _, u := range []string{bare.URL, emu.URL + "/api/v1/agents", lite.URL + "/api/v1/agents"} {
		load(b, u, conns, 300*time.Millisecond)
	}
	b.ResetTimer()
	var bareRPS, emuRPS, liteRPS, pgRPS float64
	for range b.N {
		bareRPS = load(b, bare.URL, conns, d)
		emuRPS = load(b, emu.URL+"/api/v1/agents", conns, d)
		liteRPS = load(b, lite.URL+"/api/v1/agents", conns, d)
		if pg != nil {
			pgRPS = load(b, pg.URL+"/api/v1/agents", conns, d)
		}
	}
	b.ReportMetric(bareRPS, "bare_req/s")
	b.ReportMetric(emuRPS, "emulator_req/s")
	b.ReportMetric(liteRPS, "serve_sqlite_req/s")
	b.ReportMetric(liteRPS/bareRPS, "sqlite_vs_bare")
	b.ReportMetric(liteRPS/emuRPS, "sqlite_vs_emulator")
	if pg != nil {
		b.ReportMetric(pgRPS, "serve_postgres_req/s")
		b.ReportMetric(pgRPS/emuRPS, "postgres_vs_emulator")
	}
}
