package bench

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/cli"
	"github.com/agentplane/agentplane/internal/dbtest"
	"github.com/agentplane/agentplane/internal/rollup"
)

// historySizes are the history sizes BenchmarkHistory loads per dialect. The largest are
// opt-in: AGENTPLANE_BENCH_HISTORY=full adds 1 M runs on both dialects, and
// AGENTPLANE_BENCH_HISTORY=10m adds 10 M on PostgreSQL as well; a comma-separated list of
// numbers sets the sizes exactly (e.g. "10000,100000").
func historySizes(b *testing.B, dialect string) []int {
	switch v := os.Getenv("AGENTPLANE_BENCH_HISTORY"); v {
	case "":
		return []int{10_000, 100_000}
	case "full":
		return []int{10_000, 1_000_000}
	case "10m":
		if dialect == "postgres" {
			return []int{10_000, 1_000_000, 10_000_000}
		}
		return []int{10_000, 1_000_000}
	default:
		var out []int
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1000 {
				b.Fatalf("AGENTPLANE_BENCH_HISTORY: %q is not a size of at least 1000", f)
			}
			out = append(out, n)
		}
		return out
	}
}

// BenchmarkHistory loads serve's database with N finished runs in the shapes the API writes
// (spans, frames, chat messages and scores: dbtest.FillHistory), then times reads and writes
// through the HTTP API, each the fastest of 3, at every size; it reports each figure in ms per
// size and, for the largest size, its ratio to the smallest (goal: every ratio <= 2).
//
//	TEST_DATABASE_URL=… AGENTPLANE_BENCH_HISTORY=full go test ./bench -run '^$' -bench History -benchtime 1x
func BenchmarkHistory(b *testing.B) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		b.Run(dialect, func(b *testing.B) {
			if dialect == "postgres" && os.Getenv("TEST_DATABASE_URL") == "" {
				b.Skip(dbtest.SkipMessage)
			}
			sizes := historySizes(b, dialect)
			var base map[string]float64
			for b.Loop() {
				for i, n := range sizes {
					got := historyFigures(b, dialect, n)
					names := make([]string, 0, len(got))
					for name := range got {
						names = append(names, name)
					}
					slices.Sort(names)
					for _, name := range names {
						b.ReportMetric(got[name], fmt.Sprintf("%s_%dk_ms", name, n/1000))
					}
					if i == 0 {
						base = got
						continue
					}
					if i == len(sizes)-1 {
						for _, name := range names {
							b.ReportMetric(got[name]/max(base[name], 0.01), name+"_x")
						}
					}
				}
			}
		})
	}
}

// historyFigures starts serve on a fresh database of the dialect, fills it with n runs and
// times each request, in ms (the fastest of 3).
func historyFigures(b *testing.B, dialect string, n int) map[string]float64 {
	ctx := context.Background()
	dir, dbURL, driver, dsn := b.TempDir(), "", "sqlite", ""
	if dialect == "postgres" {
		// A database of its own, not a schema of the shared one: the VACUUM after the fill
		// frees dead rows and marks pages all-visible only past every open transaction of the
		// database, and other tests' transactions in a shared one left the rollup rows' dead
		// versions (10,000 of trace_rollups' 24,000 rows at 100 K runs) and 5,000 heap
		// fetches in the executions count, as a long-running server's autovacuum would not.
		dbURL = dbtest.PostgresDatabaseURL(b)
		driver, dsn = "pgx", dbURL
	} else {
		dsn = "file:" + filepath.Join(dir, "agentplane.db") + "?_pragma=busy_timeout(10000)"
	}
	srv, err := cli.NewServer(ctx, quietLog(), io.Discard, cli.ServerConfig{DB: cli.ServerDB(dir, dbURL), Workers: 16, Models: cli.ModelsSimulated})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close(ctx)
	ts := httptest.NewServer(withKey(srv.Handler, srv.BootstrapKey))
	defer ts.Close()
	c := client.New(ts.URL)

	var agents []string
	for i := range 4 {
		a, err := c.AgentCreate(ctx, client.AgentCreateRequest{Name: fmt.Sprintf("Agent %d", i), Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini"}})
		if err != nil {
			b.Fatal(err)
		}
		agents = append(agents, a.ID)
	}
	var ws struct {
		Data []struct{ ID string } `json:"data"`
	}
	getJSON(b, ts.URL+"/api/v1/workspaces", &ws)
	db, err := sql.Open(driver, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	now := time.Now()
	start := time.Now()
	// After each load, the leader's pass packs the trace rollups' bins, as the server's own
	// leader does every 30 s: the summary is timed as a running server answers it.
	pack := rollup.New(rollup.Config{Store: srv.Store}).Pass
	for _, h := range []dbtest.History{
		// On PostgreSQL without the row triggers (the derived rows written grouped, as they
		// would): 5 times faster, what makes 10 M runs a load of minutes.
		{Workspace: ws.Data[0].ID, Agents: agents, Runs: n, IDPrefix: "h", SkipTriggers: true,
			Start: now.Add(-30 * 24 * time.Hour), End: now.Add(-time.Minute), Pack: pack},
		// One session of 10,000 messages.
		{Workspace: ws.Data[0].ID, Agents: agents[:1], Runs: 5000, IDPrefix: "s", ChatEvery: 1, ScoreEvery: 1000, SessionRuns: 5001,
			Start: now.Add(-2 * time.Hour), End: now.Add(-time.Hour), Pack: pack},
	} {
		if err := dbtest.FillHistory(ctx, db, dialect, h); err != nil {
			b.Fatal(err)
		}
	}
	// The timed reads do not share the disk with the load's writes: PostgreSQL's checkpoint
	// (SQLite's of its WAL) and the operating system's write-back of dirty pages come first. A
	// server in its steady state is not writing out the tens of GB it was just sent: at 10 M
	// runs, timed during that write-back, even a sync execute and the scores summary (the same
	// five count rows at every size) took 1.7 and 2.0 times their 1 M figures.
	settle := "CHECKPOINT"
	if dialect == "sqlite" {
		settle = "PRAGMA wal_checkpoint(TRUNCATE)"
	}
	if _, err := db.ExecContext(ctx, settle); err != nil {
		b.Fatal(err)
	}
	syscall.Sync()
	b.Logf("%s: %d runs loaded in %s", dialect, n, time.Since(start).Round(time.Second))

	var page struct {
		Data       []struct{ ID string } `json:"data"`
		Pagination client.Pagination     `json:"pagination"`
	}
	getJSON(b, ts.URL+"/api/v1/executions?limit=20", &page)
	x := page.Data[len(page.Data)-1].ID
	bigSession := "Cs" + fmt.Sprintf("%025d", 0)
	api := ts.URL + "/api/v1"
	get := func(path string) func() { return func() { getJSON(b, api+path, nil) } }
	// Page 5,000 (of 20 runs) exists from 100,000 runs on; below, the figure is of the deepest
	// page there is (page 750 of the 15,000 runs at 10 K), so that the smallest size's figure
	// reads rows too, not an empty page past the end.
	deep := min(5000, (n+5000+19)/20)
	figures := map[string]func(){
		"executions_page1":    get("/executions"),
		"executions_page5000": get(fmt.Sprintf("/executions?page=%d", deep)),
		"executions_agent":    get("/executions?agent_id=" + agents[1]),
		"executions_status":   get("/executions?status=failed"),
		"executions_source":   get("/executions?source=chat"),
		"execution":           get("/executions/" + x),
		"execution_stream":    get("/executions/" + x + "/stream"),
		"traces_page1":        get("/traces"),
		"trace_summary_24h":   get("/traces/summary?window=24h"),
		"trace_summary_30d":   get("/traces/summary?window=30d"),
		"scores_summary":      get("/scores/summary"),
		"executions_cursor_walk_per_page": func() {
			// 20 pages of 100, following next_cursor from the first.
			next := ""
			for range 20 {
				u := api + "/executions?limit=100"
				if next != "" {
					u += "&cursor=" + url.QueryEscape(next)
				}
				getJSON(b, u, &page)
				if page.Pagination.NextCursor == nil {
					b.Fatal("the walk ended early")
				}
				next = *page.Pagination.NextCursor
			}
		},
		"chat_turn_new_session": func() {
			var s struct{ Data struct{ ID string } }
			postJSON(b, api+"/chat/sessions", `{"agent_id":"`+agents[0]+`"}`, &s)
			postJSON(b, api+"/chat/sessions/"+s.Data.ID+"/messages", `{"content":"Where is order 42?"}`, nil)
		},
		"chat_turn_10k_session": func() {
			postJSON(b, api+"/chat/sessions/"+bigSession+"/messages", `{"content":"And order 43?"}`, nil)
		},
		"execute_sync": func() {
			postJSON(b, api+"/agents/"+agents[2]+"/execute", `{"input":{"message":"Where is order 44?"}}`, nil)
		},
	}
	out := map[string]float64{}
	for name, f := range figures {
		best := time.Duration(1 << 62)
		for range 3 {
			t0 := time.Now()
			f()
			best = min(best, time.Since(t0))
		}
		if name == "executions_cursor_walk_per_page" {
			best /= 20
		}
		out[name] = float64(best.Microseconds()) / 1000
	}
	return out
}

func getJSON(b *testing.B, u string, dst any) {
	b.Helper()
	resp, err := http.Get(u)
	if err != nil {
		b.Fatal(err)
	}
	readJSON(b, resp, dst)
}

func postJSON(b *testing.B, u, body string, dst any) {
	b.Helper()
	resp, err := http.Post(u, "application/json", bytes.NewBufferString(body))
	if err != nil {
		b.Fatal(err)
	}
	readJSON(b, resp, dst)
}

func readJSON(b *testing.B, resp *http.Response, dst any) {
	b.Helper()
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		b.Fatalf("%s %s: %d %s", resp.Request.Method, resp.Request.URL, resp.StatusCode, raw)
	}
	if dst != nil && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		if err := json.Unmarshal(raw, dst); err != nil {
			b.Fatal(err)
		}
	}
}
