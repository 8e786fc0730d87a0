package bench

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/cli"
	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
	"github.com/agentplane/agentplane/internal/llm/openaichat"
)

// benchReply is the fake's answer: a short reply in word-sized deltas, with usage.
var benchReply = llmtest.Reply{Text: []string{"Shipping ", "to ", "Canada ", "takes ", "five ", "to ", "seven ", "days."},
	Usage: &llmtest.Usage{Prompt: 24, Completion: 10}}

// openAIServe starts a zero-latency OpenAI fake and `serve` on SQLite with real models and a
// credential pointing at the fake; it returns the fake, serve's URL (the key is added) and
// an agent on gpt-4o-mini.
func openAIServe(b *testing.B) (*llmtest.Server, string, string) {
	b.Helper()
	fake := llmtest.NewOpenAI()
	fake.Fallback = func(llmtest.Request) llmtest.Reply { return benchReply }
	fake.Discard = true
	b.Cleanup(fake.Close)
	url := serveOpenAI(b, fake.URL+"/v1", 16)
	return fake, url, zeroLatencyAgent(b, url)
}

// serveOpenAI starts `serve` on SQLite with real models, `workers` async workers and an
// OpenAI credential whose base URL is baseURL; it returns serve's URL (the key is added).
func serveOpenAI(b *testing.B, baseURL string, workers int) string {
	b.Helper()
	ctx := context.Background()
	srv, err := cli.NewServer(ctx, quietLog(), io.Discard, cli.ServerConfig{DB: cli.ServerDB(b.TempDir(), ""), Workers: workers})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close(context.Background()) })
	ts := httptest.NewServer(withKey(srv.Handler, srv.BootstrapKey))
	b.Cleanup(ts.Close)
	if _, err := client.New(ts.URL).CredentialCreate(ctx, client.CredentialCreateRequest{Name: "bench", Type: "api_key", Provider: "openai",
		Value: "sk-bench-0000000000000000000000", Metadata: map[string]any{"base_url": baseURL}}); err != nil {
		b.Fatal(err)
	}
	return ts.URL
}

// BenchmarkExecuteOpenAI measures sync execute on `serve` (SQLite) with a real model call
// through the OpenAI protocol to a zero-latency local fake that streams its reply, at 32
// callers (goal: >= 3,000 runs/s), beside the same fake called directly through the same
// SDK by 32 callers, and beside the floor of any server doing it over HTTP: a bare net/http
// handler that makes the same model call for each POST and answers its output, with no
// key, no ledger, no trace (http_floor_exec/s; what serve reaches of it is serve_vs_floor),
// and the same handler writing the least a ledger that loses no run must: a SQLite row
// committed before the call and updated after it (http_floor_ledger_exec/s).
func BenchmarkExecuteOpenAI(b *testing.B) {
	const conns = 32
	d := 3 * time.Second
	fake, url, agent := openAIServe(b)
	body := []byte(`{"input":{"message":"How long does shipping to Canada take?"}}`)
	execURL := url + "/api/v1/agents/" + agent + "/execute"
	direct := openaichat.New(llm.Endpoint{Provider: "openai", BaseURL: fake.URL + "/v1", APIKey: "sk-bench-0000000000000000000000"})
	req := llm.Request{Model: "gpt-4o-mini", Messages: []llm.Message{{Role: llm.RoleSystem, Content: "You answer questions about shipping."},
		{Role: llm.RoleUser, Content: "How long does shipping to Canada take?"}}}
	callDirect := func(d time.Duration) float64 {
		var n atomic.Int64
		var failed atomic.Value
		deadline := time.Now().Add(d)
		var wg sync.WaitGroup
		for range conns {
			wg.Go(func() {
				for time.Now().Before(deadline) {
					if _, err := direct.Complete(context.Background(), req, func(llm.Event) error { return nil }); err != nil {
						failed.Store(err.Error())
						return
					}
					n.Add(1)
				}
			})
		}
		wg.Wait()
		if f := failed.Load(); f != nil {
			b.Fatalf("direct call: %v", f)
		}
		return float64(n.Load()) / d.Seconds()
	}
	floor := sdkFloorServer(direct, req.Messages[0].Content, nil)
	defer floor.Close()
	ledgerFloor := sdkFloorServer(direct, req.Messages[0].Content, floorLedger(b, b.TempDir()))
	defer ledgerFloor.Close()
	post(b, execURL, body, conns, 300*time.Millisecond, 200) // warm up
	post(b, floor.URL, body, conns, 300*time.Millisecond, 200)
	post(b, ledgerFloor.URL, body, conns, 300*time.Millisecond, 200)
	callDirect(300 * time.Millisecond)
	b.ResetTimer()
	var directRPS, floorRPS, ledgerRPS, serveRPS float64
	for range b.N {
		directRPS = callDirect(d)
		floorRPS = post(b, floor.URL, body, conns, d, 200)
		ledgerRPS = post(b, ledgerFloor.URL, body, conns, d, 200)
		serveRPS = post(b, execURL, body, conns, d, 200)
	}
	b.ReportMetric(directRPS, "sdk_direct_calls/s")
	b.ReportMetric(floorRPS, "http_floor_exec/s")
	b.ReportMetric(ledgerRPS, "http_floor_ledger_exec/s")
	b.ReportMetric(serveRPS/floorRPS, "serve_vs_floor")
	b.ReportMetric(serveRPS, "serve_openai_exec/s")
	b.ReportMetric(serveRPS/directRPS, "serve_ratio")
}

// BenchmarkFirstTokenOverhead measures, with one caller, the time the platform adds to the
// first token: from the fake provider flushing its first content chunk to the client reading
// the first content frame of a chat stream on `serve` (goals: p50 <= 1 ms, p99 <= 5 ms). The
// baseline is the same interval for the SDK called directly: chunk flushed to the first
// content delta decoded.
func BenchmarkFirstTokenOverhead(b *testing.B) {
	ctx := context.Background()
	fake, url, agent := openAIServe(b)
	var sentAt atomic.Int64 // unix ns of the first content chunk of the current call
	marker := []byte(`"content":"Shipping `)
	fake.OnSend = func(frame []byte) {
		if bytes.Contains(frame, marker) {
			sentAt.CompareAndSwap(0, time.Now().UnixNano())
		}
	}
	c := client.New(url)
	hc := &http.Client{}
	direct := openaichat.New(llm.Endpoint{Provider: "openai", BaseURL: fake.URL + "/v1", APIKey: "sk-bench-0000000000000000000000"})
	req := llm.Request{Model: "gpt-4o-mini", Messages: []llm.Message{{Role: llm.RoleUser, Content: "Where is my parcel?"}}}

	viaServe := func(session string) time.Duration {
		sentAt.Store(0)
		resp, err := hc.Post(url+"/api/v1/chat/sessions/"+session+"/messages/stream", "application/json",
			bytes.NewReader([]byte(`{"content":"Where is my parcel?"}`)))
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("stream: %v %v", resp, err)
		}
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		var got time.Duration
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				break
			}
			if got == 0 && line == "event: content\n" {
				got = time.Duration(time.Now().UnixNano() - sentAt.Load())
			}
		}
		return got
	}
	viaSDK := func() time.Duration {
		sentAt.Store(0)
		var got time.Duration
		_, err := direct.Complete(ctx, req, func(ev llm.Event) error {
			if got == 0 && ev.Kind == llm.EventContent {
				got = time.Duration(time.Now().UnixNano() - sentAt.Load())
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		return got
	}
	var served, sdk []time.Duration
	var session string
	b.ResetTimer()
	for i := range max(b.N, 400) {
		if i%20 == 0 {
			s, err := c.ChatSessionCreate(ctx, agent, "", nil)
			if err != nil {
				b.Fatal(err)
			}
			session = s.ID
		}
		served = append(served, viaServe(session))
		sdk = append(sdk, viaSDK())
	}
	b.ReportMetric(ms(quantile(served, 0.5)), "added_p50_ms")
	b.ReportMetric(ms(quantile(served, 0.99)), "added_p99_ms")
	b.ReportMetric(ms(quantile(sdk, 0.5)), "sdk_p50_ms")
	b.ReportMetric(ms(quantile(sdk, 0.99)), "sdk_p99_ms")
	b.ReportMetric(float64(quantile(served, 0.5))/float64(quantile(sdk, 0.5)), "p50_ratio")
}

// sdkFloorServer is the HTTP floor of BenchmarkExecuteOpenAI: each POST {"input":{"message"}}
// is one streamed model call through p (system prompt, then the message) and is answered
// {"data":{"output":…,"token_usage":…}}. With a ledger (a SQLite database), the least a run
// ledger that loses nothing writes is written too: a row committed before the call and
// updated with the output after it.
func sdkFloorServer(p *openaichat.Provider, system string, ledger *sql.DB) *httptest.Server {
	var seq atomic.Int64
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Input struct {
				Message string `json:"message"`
			} `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		id := seq.Add(1)
		if ledger != nil {
			if _, err := ledger.ExecContext(r.Context(), "INSERT INTO runs (id, input, status) VALUES (?, ?, 'running')", id, in.Input.Message); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
		}
		resp, err := p.Complete(r.Context(), llm.Request{Model: "gpt-4o-mini", Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: in.Input.Message}}},
			func(llm.Event) error { return nil })
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		if ledger != nil {
			if _, err := ledger.ExecContext(r.Context(), "UPDATE runs SET status = 'completed', output = ?, tokens = ? WHERE id = ?",
				resp.Content, resp.Usage.PromptTokens+resp.Usage.CompletionTokens, id); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{"output": resp.Content, "token_usage": resp.Usage}})
	}))
}

// floorLedger opens a SQLite database in dir as serve opens its own (WAL, synchronous NORMAL,
// one writer connection) with one table of runs.
func floorLedger(b *testing.B, dir string) *sql.DB {
	b.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "ledger.db")+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(10000)")
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	b.Cleanup(func() { db.Close() })
	if _, err := db.Exec("CREATE TABLE runs (id INTEGER PRIMARY KEY, input TEXT NOT NULL, status TEXT NOT NULL, output TEXT, tokens INTEGER)"); err != nil {
		b.Fatal(err)
	}
	return db
}
