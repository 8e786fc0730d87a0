package bench

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var urlRe = regexp.MustCompile(`listening on (http://\S+)`)

// build compiles a main package into dir and returns the binary's path.
func build(b *testing.B, dir, pkg string) string {
	b.Helper()
	bin := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("build %s: %v", pkg, err)
	}
	return bin
}

// startAndProbe starts bin, polls /health until it answers 200, and returns the time from
// process start to that answer, then the resident set size after idling for a second.
func startAndProbe(b *testing.B, bin string, args ...string) (time.Duration, int) {
	b.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "PORT=0", "HOST=127.0.0.1", "LOG_LEVEL=info")
	stderr, _ := cmd.StderrPipe()
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(stderr)
	var url string
	for sc.Scan() {
		if m := urlRe.FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
			break
		}
	}
	if url == "" {
		b.Fatalf("%s never logged its URL", bin)
	}
	go func() {
		for sc.Scan() { // keep draining stderr
		}
	}()
	hc := &http.Client{Timeout: time.Second}
	var ready time.Duration
	for {
		resp, err := hc.Get(url + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				ready = time.Since(t0)
				break
			}
		}
		if time.Since(t0) > 10*time.Second {
			b.Fatalf("%s not healthy after 10 s", bin)
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(time.Second)
	return ready, rssKiB(b, cmd.Process.Pid)
}

func rssKiB(b *testing.B, pid int) int {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Skipf("no /proc here: %v", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

// BenchmarkEmulatorStartup measures the real binary: process start to the first 200 from
// /health with the full seed loaded (goal < 100 ms), and resident memory after a second of
// idling (goal < 40 MiB), each beside a bare net/http binary measured in the same run.
func BenchmarkEmulatorStartup(b *testing.B) {
	dir := b.TempDir()
	emu := build(b, dir, "github.com/agentplane/agentplane/cmd/agentplane")
	bare := build(b, dir, "./testdata/barehttp")
	b.ResetTimer()
	var emuReady, bareReady time.Duration
	var emuRSS, bareRSS int
	for range b.N {
		d, r := startAndProbe(b, emu, "emulator")
		emuReady, emuRSS = emuReady+d, max(emuRSS, r)
		d, r = startAndProbe(b, bare)
		bareReady, bareRSS = bareReady+d, max(bareRSS, r)
	}
	n := float64(b.N)
	b.ReportMetric(float64(emuReady.Microseconds())/1000/n, "emulator_ms_to_health")
	b.ReportMetric(float64(bareReady.Microseconds())/1000/n, "bare_ms_to_health")
	b.ReportMetric(float64(emuRSS)/1024, "emulator_idle_MiB")
	b.ReportMetric(float64(bareRSS)/1024, "bare_idle_MiB")
	b.ReportMetric(float64(emuRSS)/float64(bareRSS), "rss_ratio")
}
