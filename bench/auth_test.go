package bench

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/dbtest"

	"github.com/jackc/pgx/v5/pgxpool"
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
		if _, err := c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Agent", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini"}}); err != nil {
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
// 20,000 req/s). On PostgreSQL the floor is the least any server answering the same list
// from the database does: a bare net/http handler running serve's query on pgx's native
// pool and encoding the rows with encoding/json, no auth, no limits (pg_floor_req/s; what
// serve reaches of it is postgres_vs_floor), and the same handler on serve's driver stack,
// database/sql over pgx's stdlib driver (pg_floor_database_sql_req/s). It also reports where
// the CPU goes per request: this process (load generator and server; bare_cpu_us/req is the
// same for the bare handler) and, when the database runs on this machine, its backends.
func BenchmarkAuthenticatedList(b *testing.B) {
	const conns = 64
	d := 3 * time.Second
	bare := bareServer()
	defer bare.Close()
	emu := emulatorServer(b)
	defer emu.Close()
	lite := authedServer(b, b.TempDir(), "")
	var pg, floor, sqlFloor *httptest.Server
	if u := pgSchemaURL(b); u != "" {
		pg = authedServer(b, b.TempDir(), u+"&application_name="+benchApp)
		floor, sqlFloor = pgFloorServer(b, u, false), pgFloorServer(b, u, true)
	}
	for _, u := range []string{bare.URL, emu.URL + "/api/v1/agents", lite.URL + "/api/v1/agents"} {
		load(b, u, conns, 300*time.Millisecond)
	}
	if pg != nil {
		load(b, floor.URL, conns, 300*time.Millisecond)
		load(b, sqlFloor.URL, conns, 300*time.Millisecond)
		load(b, pg.URL+"/api/v1/agents", conns, 300*time.Millisecond)
	}
	b.ResetTimer()
	var bareRPS, emuRPS, liteRPS, pgRPS, floorRPS, sqlFloorRPS float64
	var bareCPU, pgCPU, pgBackendCPU time.Duration
	backendOK := false
	for range b.N {
		c0 := processCPU()
		bareRPS = load(b, bare.URL, conns, d)
		bareCPU += processCPU() - c0
		emuRPS = load(b, emu.URL+"/api/v1/agents", conns, d)
		liteRPS = load(b, lite.URL+"/api/v1/agents", conns, d)
		if pg != nil {
			floorRPS = load(b, floor.URL, conns, d)
			sqlFloorRPS = load(b, sqlFloor.URL, conns, d)
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
		b.ReportMetric(floorRPS, "pg_floor_req/s")
		b.ReportMetric(pgRPS/floorRPS, "postgres_vs_floor")
		b.ReportMetric(sqlFloorRPS, "pg_floor_database_sql_req/s")
		b.ReportMetric(pgRPS/sqlFloorRPS, "postgres_vs_database_sql_floor")
		b.ReportMetric(perReq(pgCPU, pgRPS), "postgres_go_cpu_us/req")
		if backendOK {
			b.ReportMetric(perReq(pgBackendCPU, pgRPS), "postgres_backend_cpu_us/req")
		}
	}
}

// floorRows is what the floor reads its rows through: pgx.Rows or *sql.Rows.
type floorRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// pgFloorServer is the PostgreSQL baseline of BenchmarkAuthenticatedList: GET answers the
// first page of the workspace's agents, with serve's columns, join and order, through pgx's
// own pool or, with viaSQL, through database/sql and pgx's stdlib driver as serve's store
// does, with as many connections as serve's store, written as {"data": [...]} by
// encoding/json. The agents are the ones authedServer created in the schema dbURL names.
func pgFloorServer(b *testing.B, dbURL string, viaSQL bool) *httptest.Server {
	b.Helper()
	ctx := context.Background()
	// serve's pool size; 2, 4, 16 and 64 connections were each slower here (9,600 to 11,900 req/s
	// against 13,000 with 8, on 2 cores).
	conns := max(8, 4*runtime.GOMAXPROCS(0))
	var query func(ctx context.Context, q string, args ...any) (floorRows, func(), error)
	if viaSQL {
		db, err := sql.Open("pgx", dbURL)
		if err != nil {
			b.Fatal(err)
		}
		db.SetMaxOpenConns(conns)
		db.SetMaxIdleConns(conns)
		b.Cleanup(func() { db.Close() })
		query = func(ctx context.Context, q string, args ...any) (floorRows, func(), error) {
			rows, err := db.QueryContext(ctx, q, args...)
			if err != nil {
				return nil, nil, err
			}
			return rows, func() { rows.Close() }, nil
		}
	} else {
		cfg, err := pgxpool.ParseConfig(dbURL)
		if err != nil {
			b.Fatal(err)
		}
		cfg.MaxConns = int32(conns)
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(pool.Close)
		query = func(ctx context.Context, q string, args ...any) (floorRows, func(), error) {
			rows, err := pool.Query(ctx, q, args...)
			if err != nil {
				return nil, nil, err
			}
			return rows, rows.Close, nil
		}
	}
	rows, done, err := query(ctx, "SELECT id FROM workspaces ORDER BY created_at LIMIT 1")
	if err != nil {
		b.Fatal(err)
	}
	var ws string
	if !rows.Next() || rows.Scan(&ws) != nil {
		b.Fatalf("no workspace: %v", rows.Err())
	}
	done()
	type agent struct {
		ID            string          `json:"id"`
		WorkspaceID   string          `json:"workspace_id"`
		Name          string          `json:"name"`
		Description   string          `json:"description"`
		Type          string          `json:"type"`
		Status        string          `json:"status"`
		Tags          json.RawMessage `json:"tags"`
		Metadata      json.RawMessage `json:"metadata"`
		ActiveVersion *string         `json:"active_version_id"`
		Version       *int64          `json:"version"`
		VersionSeq    int64           `json:"version_seq"`
		Config        json.RawMessage `json:"config"`
		CreatedAt     time.Time       `json:"created_at"`
		UpdatedAt     time.Time       `json:"updated_at"`
		WebhookURL    *string         `json:"webhook_url"`
		HasSecret     bool            `json:"has_webhook_secret"`
	}
	const q = `SELECT a.id, a.workspace_id, a.name, a.description, a.type, a.status, a.tags, a.metadata,
	a.active_version_id, v.version, a.version_seq, v.config, a.created_at, a.updated_at, a.webhook_url, a.webhook_secret IS NOT NULL
	FROM agents a LEFT JOIN agent_versions v ON v.id = a.active_version_id
	WHERE a.workspace_id = $1 ORDER BY a.created_at DESC, a.id DESC LIMIT 20 OFFSET 0`
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rows, done, err := query(r.Context(), q, ws)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer done()
		var list []agent
		for rows.Next() {
			var a agent
			var tags, meta, config *string
			var created, updated int64
			if err := rows.Scan(&a.ID, &a.WorkspaceID, &a.Name, &a.Description, &a.Type, &a.Status, &tags, &meta,
				&a.ActiveVersion, &a.Version, &a.VersionSeq, &config, &created, &updated, &a.WebhookURL, &a.HasSecret); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			for _, f := range []struct {
				s   *string
				dst *json.RawMessage
			}{{tags, &a.Tags}, {meta, &a.Metadata}, {config, &a.Config}} {
				if f.s != nil {
					*f.dst = json.RawMessage(*f.s)
				}
			}
			a.CreatedAt, a.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
			list = append(list, a)
		}
		if err := rows.Err(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"data": list})
	}))
}
