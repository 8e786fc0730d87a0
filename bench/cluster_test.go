package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/dbtest"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/cli"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
)

// pgSchema returns the URL of a fresh schema of TEST_DATABASE_URL (dropped at the end), or
// skips the benchmark.
func pgSchema(b testing.TB) string {
	b.Helper()
	u := dbtest.PostgresURL(b)
	if u == "" {
		b.Skip("TEST_DATABASE_URL is not set: the PostgreSQL benchmarks need it")
	}
	return u
}

// stmtCounter is a TCP proxy in front of PostgreSQL that counts the statements clients send:
// simple-protocol queries ('Q', BEGIN and COMMIT among them) and extended-protocol executes
// ('E'). It sees every connection of a node: its pool, its LISTEN connection, its leader lock.
type stmtCounter struct {
	ln     net.Listener
	target string
	n      atomic.Int64
	// texts counts the statements by their SQL text (for the breakdown countRuns logs).
	mu    sync.Mutex
	texts map[string]int
}

func newStmtCounter(b testing.TB, pgURL string) (*stmtCounter, string) {
	b.Helper()
	u, _ := url.Parse(pgURL)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	c := &stmtCounter{ln: ln, target: u.Host, texts: map[string]int{}}
	go c.serve()
	b.Cleanup(func() { ln.Close() })
	u.Host = ln.Addr().String()
	return c, u.String()
}

func (c *stmtCounter) serve() {
	for {
		conn, err := c.ln.Accept()
		if err != nil {
			return
		}
		go c.handle(conn)
	}
}

func (c *stmtCounter) handle(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", c.target)
	if err != nil {
		return
	}
	defer server.Close()
	go func() { _, _ = io.Copy(client, server); client.Close() }()
	r := bufio.NewReader(client)
	// Start-up messages have no type byte (an SSL or GSS request first, then the startup).
	for {
		var n uint32
		if err := binary.Read(r, binary.BigEndian, &n); err != nil || n < 8 {
			return
		}
		body := make([]byte, n-4)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		var hdr [4]byte
		binary.BigEndian.PutUint32(hdr[:], n)
		if _, err := server.Write(append(hdr[:], body...)); err != nil {
			return
		}
		code := binary.BigEndian.Uint32(body[:4])
		if code != 80877103 && code != 80877104 { // not an SSL or GSS encryption request
			break
		}
	}
	prepared := map[string]string{} // this connection's statements by name
	bound := ""
	for {
		typ, err := r.ReadByte()
		if err != nil {
			return
		}
		var n uint32
		if err := binary.Read(r, binary.BigEndian, &n); err != nil {
			return
		}
		body := make([]byte, n-4)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		switch typ {
		case 'P': // Parse: statement name, query
			name, rest, _ := bytes.Cut(body, []byte{0})
			query, _, _ := bytes.Cut(rest, []byte{0})
			prepared[string(name)] = string(query)
		case 'B': // Bind: portal, statement name
			_, rest, _ := bytes.Cut(body, []byte{0})
			name, _, _ := bytes.Cut(rest, []byte{0})
			bound = prepared[string(name)]
		case 'Q':
			query, _, _ := bytes.Cut(body, []byte{0})
			c.count(string(query))
		case 'E':
			c.count(bound)
		}
		var hdr [5]byte
		hdr[0] = typ
		binary.BigEndian.PutUint32(hdr[1:], n)
		if _, err := server.Write(append(hdr[:], body...)); err != nil {
			return
		}
	}
}

func (c *stmtCounter) count(query string) {
	c.n.Add(1)
	c.mu.Lock()
	c.texts[strings.Join(strings.Fields(query), " ")]++
	c.mu.Unlock()
}

// breakdown returns the statements counted since from (a copy of texts), per run, most
// frequent first, as lines for the log.
func (c *stmtCounter) breakdown(from map[string]int, runs int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	type line struct {
		text string
		n    int
	}
	var lines []line
	for t, n := range c.texts {
		if d := n - from[t]; d > 0 {
			lines = append(lines, line{t, d})
		}
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i].n > lines[j].n })
	var out []string
	for _, l := range lines {
		if len(l.text) > 160 {
			l.text = l.text[:160] + "…"
		}
		out = append(out, fmt.Sprintf("%6.2f %s", float64(l.n)/float64(runs), l.text))
	}
	return out
}

func (c *stmtCounter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.texts)
}

// pgNodes starts n `serve` nodes on the database at pgURL (simulated model) and returns their
// execute URLs for one agent, and a function that stops them.
func pgNodes(b testing.TB, pgURL string, n int) ([]string, func()) {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	var urls []string
	var agent, key string
	var stops []func()
	for range n {
		srv, err := cli.NewServer(ctx, quietLog(), io.Discard, cli.ServerConfig{DB: cli.ServerDB(dir, pgURL), Workers: 16, Models: cli.ModelsSimulated})
		if err != nil {
			b.Fatal(err)
		}
		if srv.BootstrapKey != "" {
			key = srv.BootstrapKey
		}
		ts := httptest.NewServer(withKey(srv.Handler, key))
		stops = append(stops, func() { ts.Close(); srv.Close(context.Background()) })
		if agent == "" {
			agent = zeroLatencyAgent(b, ts.URL)
		}
		urls = append(urls, ts.URL+"/api/v1/agents/"+agent+"/execute")
	}
	return urls, func() {
		for _, stop := range stops {
			stop()
		}
	}
}

// postAll runs post against every url at once, conns split between them, and returns the
// total requests/s.
func postAll(b *testing.B, urls []string, body []byte, conns int, d time.Duration) float64 {
	var total atomic.Uint64
	var wg sync.WaitGroup
	for _, u := range urls {
		wg.Go(func() {
			rps := post(b, u, body, conns/len(urls), d, 200)
			total.Add(uint64(rps))
		})
	}
	wg.Wait()
	return float64(total.Load())
}

// countRuns sends runs sync executes (from 8 callers, spread over urls) and returns the
// statements the nodes sent per run, and what they send per second when idle.
func countRuns(b testing.TB, c *stmtCounter, urls []string, body []byte, runs int) (perRun, idlePerSec float64) {
	b.Helper()
	time.Sleep(200 * time.Millisecond)
	idleFrom := c.n.Load()
	time.Sleep(2 * time.Second)
	idlePerSec = float64(c.n.Load()-idleFrom) / 2
	from, t0, texts := c.n.Load(), time.Now(), c.snapshot()
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			hc := &http.Client{}
			for next.Add(1) <= int64(runs) {
				resp, err := hc.Post(urls[w%len(urls)], "application/json", bytes.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Errorf("execute: %s", resp.Status)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, l := range c.breakdown(texts, runs) {
		b.Log(l) // with -v: what a run sends (background work included)
	}
	background := idlePerSec * time.Since(t0).Seconds()
	return (float64(c.n.Load()-from) - background) / float64(runs), idlePerSec
}

// BenchmarkExecuteSyncPostgres measures sync POST /agents/{id}/execute (zero-latency simulated
// model, 32 concurrent callers) on PostgreSQL with one `serve` node and with two on the same
// database, and counts the SQL statements sent per run (through a counting proxy, BEGIN and
// COMMIT included, the nodes' background work subtracted); the count must not grow with the
// number of nodes.
//
//	TEST_DATABASE_URL=postgres://… go test ./bench -run '^$' -bench ExecuteSyncPostgres -benchtime 1x
func BenchmarkExecuteSyncPostgres(b *testing.B) {
	const conns = 32
	d := 3 * time.Second
	body := []byte(`{"input":{"message":"How long does shipping to Canada take?"}}`)
	for _, n := range []int{1, 2} {
		urls, stop := pgNodes(b, pgSchema(b), n)
		postAll(b, urls, body, conns, 300*time.Millisecond) // warm up
		var rps float64
		for range b.N {
			rps = postAll(b, urls, body, conns, d)
		}
		stop()
		b.ReportMetric(rps, fmt.Sprintf("pg_%dnode_exec/s", n))

		counter, proxied := newStmtCounter(b, pgSchema(b))
		curls, stop := pgNodes(b, proxied, n)
		perRun, idle := countRuns(b, counter, curls, body, 1000)
		stop()
		b.ReportMetric(perRun, fmt.Sprintf("pg_%dnode_stmts/run", n))
		b.ReportMetric(idle, fmt.Sprintf("pg_%dnode_idle_stmts/s", n))
	}
}

// BenchmarkClusterCeiling measures how far a cluster on one PostgreSQL goes: sync runs/s of
// simple executes (zero-latency simulated model, 48 callers split between the nodes) with 1,
// 2 and 4 `serve` nodes on one database, and the CPU time PostgreSQL's backends spent per run
// (read from /proc: reported only when the database runs on this machine). The nodes run in
// this process and share its cores with the database, so the runs/s are a floor of what
// nodes on their own machines reach; the backends' CPU per run is what bounds the cluster.
//
//	TEST_DATABASE_URL=postgres://… go test ./bench -run '^$' -bench ClusterCeiling -benchtime 1x
func BenchmarkClusterCeiling(b *testing.B) {
	const conns, app = 48, "agentplane-bench-ceiling"
	d := 3 * time.Second
	body := []byte(`{"input":{"message":"How long does shipping to Canada take?"}}`)
	for _, n := range []int{1, 2, 4} {
		urls, stop := pgNodes(b, pgSchema(b)+"&application_name="+app, n)
		postAll(b, urls, body, conns, 300*time.Millisecond) // warm up
		var rps float64
		var cpu time.Duration
		measured := false
		for range b.N {
			c0, _ := backendCPU(b, app)
			rps = postAll(b, urls, body, conns, d)
			c1, ok := backendCPU(b, app)
			cpu, measured = c1-c0, ok
		}
		stop()
		b.ReportMetric(rps, fmt.Sprintf("pg_%dnode_runs/s", n))
		if measured && rps > 0 {
			b.ReportMetric(float64(cpu.Microseconds())/(rps*d.Seconds()), fmt.Sprintf("pg_%dnode_db_cpu_us/run", n))
		}
	}
}

// BenchmarkCrossNode measures, on two `serve` nodes on one PostgreSQL database, the delay
// from a streaming model's chunk leaving the fake provider to its frame reaching a stream
// on the other node (goal: p99 < 50 ms), beside a stream on the runner's own node, and the
// time a cancel sent to the other node takes to answer with the run recorded cancelled
// (goal: < 100 ms).
//
//	TEST_DATABASE_URL=postgres://… go test ./bench -run '^$' -bench CrossNode -benchtime 1x
func BenchmarkCrossNode(b *testing.B) {
	ctx := context.Background()
	pg := pgSchema(b)
	fake := llmtest.NewOpenAI()
	defer fake.Close()
	fake.Discard = true
	const words = 40
	var mu sync.Mutex
	sentAt := map[string]time.Time{}
	fake.OnSend = func(frame []byte) {
		if i := bytes.Index(frame, []byte(`"content":"`)); i >= 0 {
			rest := frame[i+len(`"content":"`):]
			if j := bytes.IndexByte(rest, '"'); j > 0 {
				mu.Lock()
				sentAt[string(rest[:j])] = time.Now()
				mu.Unlock()
			}
		}
	}
	var seq atomic.Int64
	fake.Fallback = func(req llmtest.Request) llmtest.Reply {
		n := seq.Add(1)
		text := make([]string, words)
		for i := range text {
			text[i] = fmt.Sprintf("r%dw%d ", n, i)
		}
		delay := 20 * time.Millisecond
		if strings.Contains(string(req.Raw), "cancel me") {
			delay = time.Second
		}
		return llmtest.Reply{Text: text, Delay: delay, Usage: &llmtest.Usage{Prompt: 5, Completion: words}}
	}
	dir := b.TempDir()
	var urls []string
	key := ""
	for range 2 {
		srv, err := cli.NewServer(ctx, quietLog(), io.Discard, cli.ServerConfig{DB: cli.ServerDB(dir, pg), Workers: 8, Models: cli.ModelsReal})
		if err != nil {
			b.Fatal(err)
		}
		defer srv.Close(context.Background())
		if srv.BootstrapKey != "" {
			key = srv.BootstrapKey
		}
		ts := httptest.NewServer(srv.Handler)
		defer ts.Close()
		urls = append(urls, ts.URL)
	}
	ca, cb := client.New(urls[0], client.WithAPIKey(key)), client.New(urls[1], client.WithAPIKey(key))
	if _, err := ca.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "fake", Type: "api_key", Provider: "openai",
		Value: "sk-proj-benchTEST000000000000000000000000", Metadata: map[string]any{"base_url": fake.URL + "/v1"}}); err != nil {
		b.Fatal(err)
	}
	a, err := ca.AgentCreate(ctx, client.AgentCreateRequest{Name: "Stream", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini"}})
	if err != nil {
		b.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the nodes hear each other's hello

	// startOnA starts a sync run on node A and returns its id once it runs.
	startOnA := func(msg string) (string, chan struct{}) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = ca.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": msg}})
		}()
		for {
			l, err := ca.ExecutionList(ctx, client.ListExecutionsParams{Status: "running", Limit: 1})
			if err == nil && len(l.Data) > 0 {
				return l.Data[0].ID, done
			}
			time.Sleep(time.Millisecond)
		}
	}
	latencies := func(c *client.Client, runs int) []time.Duration {
		var out []time.Duration
		for r := range runs {
			id, done := startOnA(fmt.Sprintf("stream %d", r))
			s, err := c.ExecutionStream(ctx, id, 0)
			if err != nil {
				b.Fatal(err)
			}
			opened := time.Now() // frames sent before come from the store: not live delays
			for {
				ev, ok, err := s.Next()
				if err != nil || !ok || ev.Terminal() {
					break
				}
				at := time.Now()
				if ev.Event != "content" {
					continue
				}
				var d struct{ Content string }
				_ = json.Unmarshal([]byte(ev.Data), &d)
				mu.Lock()
				sent, ok := sentAt[d.Content]
				mu.Unlock()
				if ok && sent.After(opened) {
					out = append(out, at.Sub(sent))
				}
			}
			s.Close()
			<-done
		}
		return out
	}
	b.ResetTimer()
	var remote, local, cancels []time.Duration
	for range b.N {
		remote = append(remote, latencies(cb, 5)...)
		local = append(local, latencies(ca, 2)...)
		for range 10 {
			id, done := startOnA("cancel me")
			time.Sleep(50 * time.Millisecond)
			t0 := time.Now()
			x, err := cb.ExecutionCancel(ctx, id)
			if err != nil || x.Status != "cancelled" {
				b.Fatalf("cancel: %+v %v", x, err)
			}
			cancels = append(cancels, time.Since(t0))
			<-done
		}
	}
	b.ReportMetric(ms(quantile(remote, 0.5)), "remote_frame_p50_ms")
	b.ReportMetric(ms(quantile(remote, 0.99)), "remote_frame_p99_ms")
	b.ReportMetric(ms(quantile(local, 0.99)), "local_frame_p99_ms")
	b.ReportMetric(ms(quantile(cancels, 0.5)), "remote_cancel_p50_ms")
	b.ReportMetric(ms(quantile(cancels, 0.99)), "remote_cancel_p99_ms")
}

// TestStatementsPerRun: a simple sync run (POST /agents/{id}/execute, no tools) costs at
// most 8 statements on PostgreSQL, BEGIN and COMMIT included, and two write transactions:
// the execution with its trace (one statement, outside a transaction), then the outcome
// (BEGIN, the move with the trace's end, the webhook lookup, the frames, the spans, COMMIT);
// the agent is read before.
//
//	TEST_DATABASE_URL=postgres://… go test ./bench -run StatementsPerRun -v
func TestStatementsPerRun(t *testing.T) {
	counter, proxied := newStmtCounter(t, pgSchema(t))
	urls, stop := pgNodes(t, proxied, 1)
	defer stop()
	body := []byte(`{"input":{"message":"How long does shipping to Canada take?"}}`)
	countRuns(t, counter, urls, body, 20) // warm: statements prepared, caches filled
	begins := counter.snapshot()["begin"]
	perRun, _ := countRuns(t, counter, urls, body, 300)
	t.Logf("%.2f statements per run", perRun)
	if perRun > 8.2 {
		t.Fatalf("%.2f statements per run, want at most 8", perRun)
	}
	counter.mu.Lock()
	perRunBegins := float64(counter.texts["begin"]-begins) / 300
	counter.mu.Unlock()
	if perRunBegins > 1.05 {
		t.Fatalf("%.2f transactions opened per run, want 1 (and the execution's insert on its own)", perRunBegins)
	}
}
