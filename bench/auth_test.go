package bench

import (
	"context"
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/dbtest"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/cli"
)

// pgSchemaURL returns TEST_DATABASE_URL pointed at a fresh schema (dropped at the end), or "".
func pgSchemaURL(b *testing.B) string {
	b.Helper()
	return dbtest.PostgresURL(b)
}

// authedServer starts `serve` in-process on dataDir (or a PostgreSQL URL) with six agents,
// every request carrying its bootstrap key.
func authedServer(b *testing.B, dataDir, dbURL string) *httptest.Server {
	ctx := context.Background()
	srv, err := cli.NewServer(ctx, quietLog(), io.Discard, cli.ServerConfig{DB: cli.ServerDB(dataDir, dbURL), Workers: 16, Models: cli.ModelsSimulated})
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

// benchApp names the PostgreSQL connections of the server under test, to find their backends.
const benchApp = "agentplane-bench"

// BenchmarkAuthenticatedList compares authenticated GET /api/v1/agents on `serve` (SQLite,
// and PostgreSQL when TEST_DATABASE_URL is set) with the unauthenticated emulator and a bare
// net/http JSON handler, all at 64 connections (goals: SQLite >= 0.4 of bare; PostgreSQL
// 20,000 req/s). On PostgreSQL it also reports where the CPU goes per request: this process
// (load generator and server; bare_cpu_us/req is the same for the bare handler) and, when
// the database runs on this machine, its backends.
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
		pg = authedServer(b, b.TempDir(), u+"&application_name="+benchApp)
	}
	for _, u := range []string{bare.URL, emu.URL + "/api/v1/agents", lite.URL + "/api/v1/agents"} {
		load(b, u, conns, 300*time.Millisecond)
	}
	if pg != nil {
		load(b, pg.URL+"/api/v1/agents", conns, 300*time.Millisecond)
	}
	b.ResetTimer()
	var bareRPS, emuRPS, liteRPS, pgRPS float64
	var bareCPU, pgCPU, pgBackendCPU time.Duration
	backendOK := false
	for range b.N {
		c0 := processCPU()
		bareRPS = load(b, bare.URL, conns, d)
		bareCPU += processCPU() - c0
		emuRPS = load(b, emu.URL+"/api/v1/agents", conns, d)
		liteRPS = load(b, lite.URL+"/api/v1/agents", conns, d)
		if pg != nil {
			p0, _ := backendCPU(b, benchApp)
			c0 := processCPU()
			pgRPS = load(b, pg.URL+"/api/v1/agents", conns, d)
			pgCPU += processCPU() - c0
			p1, ok := backendCPU(b, benchApp)
			pgBackendCPU += p1 - p0
			backendOK = ok
		}
	}
	perReq := func(cpu time.Duration, rps float64) float64 {
		return float64(cpu.Microseconds()) / (rps * d.Seconds() * float64(b.N))
	}
	b.ReportMetric(bareRPS, "bare_req/s")
	b.ReportMetric(perReq(bareCPU, bareRPS), "bare_cpu_us/req")
	b.ReportMetric(emuRPS, "emulator_req/s")
	b.ReportMetric(liteRPS, "serve_sqlite_req/s")
	b.ReportMetric(liteRPS/bareRPS, "sqlite_vs_bare")
	b.ReportMetric(liteRPS/emuRPS, "sqlite_vs_emulator")
	if pg != nil {
		b.ReportMetric(pgRPS, "serve_postgres_req/s")
		b.ReportMetric(pgRPS/emuRPS, "postgres_vs_emulator")
		b.ReportMetric(pgRPS/bareRPS, "postgres_vs_bare")
		b.ReportMetric(perReq(pgCPU, pgRPS), "postgres_go_cpu_us/req")
		if backendOK {
			b.ReportMetric(perReq(pgBackendCPU, pgRPS), "postgres_backend_cpu_us/req")
		}
	}
}
