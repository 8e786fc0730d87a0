// Package bench holds agentplane's performance benchmarks. Each compares against a baseline
// measured in the same run, and reports the ratio as a metric:
//
//	go test ./bench -run '^$' -bench . -benchtime 3s
package bench

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/cli"
)

// load sends GET url from `conns` keep-alive connections for d and returns requests/s.
func load(b *testing.B, url string, conns int, d time.Duration) float64 {
	b.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	var n atomic.Int64
	var failed atomic.Value
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				resp, err := hc.Get(url)
				if err != nil {
					failed.Store(err.Error())
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failed.Store(resp.Status)
					return
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	if f := failed.Load(); f != nil {
		b.Fatalf("load on %s failed: %v", url, f)
	}
	return float64(n.Load()) / d.Seconds()
}

// bareServer is the baseline: a plain net/http handler writing a small JSON list.
func bareServer() *httptest.Server {
	type item struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	items := []item{{"1", "a"}, {"2", "b"}, {"3", "c"}, {"4", "d"}, {"5", "e"}, {"6", "f"}}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"data": items, "message": ""})
	}))
}

func emulatorServer(b *testing.B) *httptest.Server {
	b.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	emu, err := cli.NewEmulator(context.Background(), log, cli.EmulatorConfig{Seed: true, CORSOrigins: []string{"*"}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { emu.Close() })
	return httptest.NewServer(emu.Handler)
}

// BenchmarkListAgents compares GET /api/v1/agents on the seeded emulator with a bare net/http
// JSON handler, both at 64 concurrent keep-alive connections, and reports the ratio
// (goal: emulator/bare >= 0.5).
func BenchmarkListAgents(b *testing.B) {
	const conns = 64
	d := 3 * time.Second
	bare := bareServer()
	defer bare.Close()
	emu := emulatorServer(b)
	defer emu.Close()
	load(b, bare.URL, conns, 300*time.Millisecond) // warm both
	load(b, emu.URL+"/api/v1/agents", conns, 300*time.Millisecond)
	b.ResetTimer()
	var bareRPS, emuRPS float64
	for range b.N {
		bareRPS = load(b, bare.URL, conns, d)
		emuRPS = load(b, emu.URL+"/api/v1/agents", conns, d)
	}
	b.ReportMetric(bareRPS, "bare_req/s")
	b.ReportMetric(emuRPS, "emulator_req/s")
	b.ReportMetric(emuRPS/bareRPS, "ratio")
}
