package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/cli"
)

// withKey sends every request to h with the X-API-Key that `serve` requires.
func withKey(h http.Handler, key string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("X-API-Key", key)
		h.ServeHTTP(w, r)
	})
}

func quietLog() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError}))
}

// post sends `body` to url from `conns` callers for d and returns requests/s; every answer
// must have status want.
func post(b *testing.B, url string, body []byte, conns int, d time.Duration, want int) float64 {
	b.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	var n atomic.Int64
	var failed atomic.Value
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				resp, err := hc.Post(url, "application/json", bytes.NewReader(body))
				if err != nil {
					failed.Store(err.Error())
					return
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != want {
					failed.Store(resp.Status + " " + string(raw))
					return
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	if f := failed.Load(); f != nil {
		b.Fatalf("POST %s: %v", url, f)
	}
	return float64(n.Load()) / d.Seconds()
}

// bareEcho is the baseline for POSTs: decode a JSON body, answer a small JSON envelope.
func bareEcho() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in map[string]any
		_ = json.NewDecoder(r.Body).Decode(&in)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{"id": "x", "status": "completed", "input": in}, "message": ""})
	}))
}

func zeroLatencyAgent(b testing.TB, url string) string {
	b.Helper()
	a, err := client.New(url).AgentCreate(context.Background(), client.AgentCreateRequest{Name: "Bench", Type: "simple",
		Config: client.AgentConfig{Model: "gpt-4o-mini", SystemPrompt: "You answer questions about shipping."}})
	if err != nil {
		b.Fatal(err)
	}
	return a.ID
}

// BenchmarkExecuteSync measures sync POST /agents/{id}/execute with the zero-latency
// simulated model at 32 concurrent callers, on the emulator and on `serve` with SQLite, beside
// a bare net/http JSON handler (goals: >= 5,000/s emulator, >= 2,000/s serve).
func BenchmarkExecuteSync(b *testing.B) {
	const conns = 32
	d := 3 * time.Second
	ctx := context.Background()
	bare := bareEcho()
	defer bare.Close()
	emu, err := cli.NewEmulator(ctx, quietLog(), cli.EmulatorConfig{Seed: true})
	if err != nil {
		b.Fatal(err)
	}
	defer emu.Close()
	emuTS := httptest.NewServer(emu.Handler)
	defer emuTS.Close()
	srv, err := cli.NewServer(ctx, quietLog(), io.Discard, cli.ServerConfig{DB: cli.ServerDB(b.TempDir(), ""), Workers: 16, Models: cli.ModelsSimulated})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close(ctx)
	srvTS := httptest.NewServer(withKey(srv.Handler, srv.BootstrapKey))
	defer srvTS.Close()
	body := []byte(`{"input":{"message":"How long does shipping to Canada take?"}}`)
	emuURL := emuTS.URL + "/api/v1/agents/" + zeroLatencyAgent(b, emuTS.URL) + "/execute"
	srvURL := srvTS.URL + "/api/v1/agents/" + zeroLatencyAgent(b, srvTS.URL) + "/execute"
	post(b, emuURL, body, conns, 300*time.Millisecond, 200) // warm up
	post(b, srvURL, body, conns, 300*time.Millisecond, 200)
	b.ResetTimer()
	var bareRPS, emuRPS, srvRPS float64
	for range b.N {
		// Each binary's own GC target: the emulator's (see cli.EmulatorGCPercent), Go's
		// default for serve; the baseline is measured under both.
		old := debug.SetGCPercent(cli.EmulatorGCPercent)
		bareRPS = post(b, bare.URL, body, conns, d, 200)
		emuRPS = post(b, emuURL, body, conns, d, 200)
		debug.SetGCPercent(old)
		srvRPS = post(b, srvURL, body, conns, d, 200)
	}
	b.ReportMetric(bareRPS, "bare_req/s")
	b.ReportMetric(emuRPS, "emulator_exec/s")
	b.ReportMetric(srvRPS, "serve_sqlite_exec/s")
	b.ReportMetric(emuRPS/bareRPS, "emulator_ratio")
	b.ReportMetric(srvRPS/bareRPS, "serve_ratio")
}

// BenchmarkChatStreamTTFB measures, with one caller, the time from sending a chat message to
// the first byte of the SSE response and to the first content frame (goal: p50 < 2 ms), beside
// a bare SSE handler's time to first byte.
func BenchmarkChatStreamTTFB(b *testing.B) {
	ctx := context.Background()
	emu, err := cli.NewEmulator(ctx, quietLog(), cli.EmulatorConfig{Seed: true})
	if err != nil {
		b.Fatal(err)
	}
	defer emu.Close()
	ts := httptest.NewServer(emu.Handler)
	defer ts.Close()
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "id: 0\nevent: execution\ndata: {}\n\n")
		w.(http.Flusher).Flush()
		_, _ = io.WriteString(w, "id: 1\nevent: done\ndata: {}\n\n")
	}))
	defer bare.Close()
	c := client.New(ts.URL)
	agent := zeroLatencyAgent(b, ts.URL)
	hc := &http.Client{}
	measure := func(url string) (time.Duration, time.Duration) {
		t0 := time.Now()
		resp, err := hc.Post(url, "application/json", bytes.NewReader([]byte(`{"content":"Where is my parcel?"}`)))
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("stream: %v %v", resp, err)
		}
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		if _, err := br.Peek(1); err != nil {
			b.Fatal(err)
		}
		first := time.Since(t0)
		var content time.Duration
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				break
			}
			if content == 0 && line == "event: content\n" {
				content = time.Since(t0)
			}
		}
		return first, content
	}
	var firsts, contents, bares []time.Duration
	var session string
	b.ResetTimer()
	for i := range max(b.N, 200) {
		if i%20 == 0 {
			s, err := c.ChatSessionCreate(ctx, agent, "", nil)
			if err != nil {
				b.Fatal(err)
			}
			session = s.ID
		}
		f, ct := measure(ts.URL + "/api/v1/chat/sessions/" + session + "/messages/stream")
		firsts, contents = append(firsts, f), append(contents, ct)
		bf, _ := measure(bare.URL)
		bares = append(bares, bf)
	}
	b.ReportMetric(ms(quantile(firsts, 0.5)), "ttfb_p50_ms")
	b.ReportMetric(ms(quantile(contents, 0.5)), "first_content_p50_ms")
	b.ReportMetric(ms(quantile(bares, 0.5)), "bare_ttfb_p50_ms")
	b.ReportMetric(float64(quantile(firsts, 0.5))/float64(quantile(bares, 0.5)), "ttfb_ratio")
}

// quantile returns the q-quantile (0..1) of ds.
func quantile(ds []time.Duration, q float64) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(q*float64(len(s)-1)+0.5)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
