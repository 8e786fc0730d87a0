package e2e

import (
	"context"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestReadmeWalkthrough runs the README's emulator walk-through, as written, against a fresh
// emulator (only its address is changed) with bash and curl; any non-2xx answer fails it.
func TestReadmeWalkthrough(t *testing.T) {
	t.Parallel()
	block := readmeBlock(t, "## Walk-through (emulator)")
	p := start(t, emulatorEnv(nil), "emulator")
	u, err := url.Parse(p.URL)
	if err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	// --fail-with-body turns any 4xx or 5xx into a failure of the command, and so of the script.
	script.WriteString("set -euo pipefail\n" +
		"curl() { local rc=0; command curl --fail-with-body --max-time 30 --no-progress-meter \"$@\" || rc=$?; echo; return $rc; }\n")
	ran := 0
	for _, line := range strings.Split(block, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "go run ./cmd/agentplane emulator") {
			continue // the test started the emulator
		}
		if strings.Contains(line, "curl ") {
			ran++
		}
		script.WriteString(strings.ReplaceAll(line, "localhost:8080", u.Host) + "\n")
	}
	if ran < 10 {
		t.Fatalf("found only %d curl commands in the walk-through", ran)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the walk-through failed: %v\n%s", err, out)
	}
	for _, want := range []string{`"status":"completed"`, "event: done", `"rendered":"Hello Ada, welcome to Acme!"`, `"model":"claude-sonnet-4-20250514"`, `"name":"helpfulness","data_type":"numeric","count":1,"mean":4`,
		`"columns":[{"name":"status","type":"text"},{"name":"n","type":"integer"}]`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the walk-through's output lacks %s:\n%s", want, out)
		}
	}
}
