package bench

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
)

// openStreams opens n raw SSE connections to url+paths[i%len(paths)] and waits for each to
// receive its first bytes; it returns the connections (close them to end the streams).
func openStreams(b *testing.B, base string, paths []string, n int) []net.Conn {
	b.Helper()
	host := strings.TrimPrefix(base, "http://")
	conns := make([]net.Conn, 0, n)
	for i := range n {
		c, err := net.Dial("tcp", host)
		if err != nil {
			b.Fatalf("stream %d: %v", i, err)
		}
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nLast-Event-ID: 0\r\n\r\n", paths[i%len(paths)], host)
		conns = append(conns, c)
	}
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		br := bufio.NewReaderSize(c, 512)
		line, err := br.ReadString('\n')
		if err != nil || !strings.Contains(line, "200") {
			b.Fatalf("stream %d: %q %v", i, line, err)
		}
	}
	return conns
}

func startBin(b *testing.B, bin string, env []string, args ...string) (*exec.Cmd, string) {
	b.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := urlRe.FindStringSubmatch(sc.Text()); m != nil {
			go func() {
				for sc.Scan() {
				}
			}()
			return cmd, m[1]
		}
	}
	b.Fatalf("%s did not start", bin)
	return nil, ""
}

// BenchmarkOpenStreams holds 10,000 concurrent execution streams on one emulator process
// (100 per running execution) and reports the server's resident memory per stream, beside a
// bare Go SSE server holding as many (goal: at most 32 KiB per stream).
func BenchmarkOpenStreams(b *testing.B) {
	const n = 10000
	dir := b.TempDir()
	emuBin := build(b, dir, "github.com/agentplane/agentplane/cmd/agentplane")
	bareBin := build(b, dir, "./testdata/baresse")
	b.ResetTimer()
	var emuPer, barePer float64
	for range b.N {
		// Bare baseline.
		cmd, url := startBin(b, bareBin, nil)
		time.Sleep(300 * time.Millisecond)
		before := rssKiB(b, cmd.Process.Pid)
		conns := openStreams(b, url, []string{"/stream"}, n)
		time.Sleep(time.Second)
		barePer = float64(rssKiB(b, cmd.Process.Pid)-before) / n
		for _, c := range conns {
			c.Close()
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()

		// The emulator: 100 long-running executions, 100 streams on each.
		cmd, url = startBin(b, emuBin, []string{"PORT=0", "HOST=127.0.0.1", "LOG_LEVEL=error"}, "emulator")
		c := client.New(url)
		ctx := context.Background()
		a, err := c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Slow", Type: "simple",
			Config: client.AgentConfig{Model: "gpt-4o-mini", Simulation: client.Simulation{LatencyMs: client.Ptr[int64](120000)}}})
		if err != nil {
			b.Fatal(err)
		}
		var paths []string
		for range 100 {
			x, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "hold on"}, TimeoutMs: 1})
			if err != nil {
				b.Fatal(err)
			}
			paths = append(paths, "/api/v1/executions/"+x.ID+"/stream")
		}
		time.Sleep(500 * time.Millisecond)
		before = rssKiB(b, cmd.Process.Pid)
		conns = openStreams(b, url, paths, n)
		time.Sleep(time.Second)
		emuPer = float64(rssKiB(b, cmd.Process.Pid)-before) / n
		h, err := http.Get(url + "/health")
		if err != nil || h.StatusCode != 200 {
			b.Fatalf("emulator unhealthy with %d streams: %v", n, err)
		}
		h.Body.Close()
		for _, c := range conns {
			c.Close()
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	b.ReportMetric(emuPer, "emulator_KiB/stream")
	b.ReportMetric(barePer, "bare_KiB/stream")
	b.ReportMetric(emuPer/barePer, "ratio")
}
