package e2e

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/llm/llmtest"
)

// TestReadmeServeWalkthrough runs the README's serve walk-through, as written, against a fresh
// `serve` with real models (only the addresses and the printed key are filled in), its local
// model a fake OpenAI-compatible server; any non-2xx answer fails it.
func TestReadmeServeWalkthrough(t *testing.T) {
	t.Parallel()
	block := readmeBlock(t, "## Walk-through (serve)")
	model := llmtest.NewOpenAI()
	model.Fallback = func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: []string{"A self-hosted", " agent platform."}, Usage: &llmtest.Usage{Prompt: 12, Completion: 5}}
	}
	t.Cleanup(model.Close)
	p := start(t, map[string]string{"HOST": "127.0.0.1", "PORT": "0", "DATA_DIR": t.TempDir(), "LOG_LEVEL": "warn", "SHUTDOWN_TIMEOUT": "200ms"}, "serve")
	if !strings.HasPrefix(p.Key, "ap_") {
		t.Fatalf("serve printed no key:\n%s", p.Logs())
	}
	srv, _ := url.Parse(p.URL)
	local, _ := url.Parse(model.URL)
	var script strings.Builder
	script.WriteString("set -euo pipefail\n" +
		"curl() { local rc=0; command curl --fail-with-body --max-time 30 --no-progress-meter \"$@\" || rc=$?; echo; return $rc; }\n")
	ran := 0
	for _, line := range strings.Split(block, "\n") {
		switch {
		case strings.HasPrefix(line, "go run ./cmd/agentplane serve"):
			continue // the test started serve
		case strings.HasPrefix(line, "KEY="):
			line = "KEY='" + p.Key + "'"
		}
		if strings.Contains(line, "curl ") {
			ran++
		}
		line = strings.ReplaceAll(line, "localhost:8080", srv.Host)
		script.WriteString(strings.ReplaceAll(line, "localhost:11434", local.Host) + "\n")
	}
	if ran < 8 {
		t.Fatalf("found only %d curl commands in the walk-through", ran)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", "-c", script.String()).CombinedOutput()
	if err != nil {
		t.Fatalf("the walk-through failed: %v\n%s", err, out)
	}
	for _, want := range []string{`"valid":true`, `"status":"completed"`, `"content":"A self-hosted agent platform."`, "event: done", `"name":"helpfulness"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the walk-through's output lacks %s:\n%s", want, out)
		}
	}
	calls := 0
	for _, r := range model.Requests() {
		if strings.HasSuffix(r.Path, "/chat/completions") && r.Body["model"] == "llama3.1:8b" {
			calls++
		}
	}
	if calls < 3 {
		t.Errorf("the local model got %d calls for llama3.1:8b, want one per run and chat turn (3)", calls)
	}
}

// readmeBlock returns the first shell block after a README heading, skipping the test when
// a tool the walk-throughs run is missing.
func readmeBlock(t *testing.T, heading string) string {
	t.Helper()
	for _, tool := range []string{"bash", "curl", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the README walk-through needs it (.ci/run installs curl)", tool)
		}
	}
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), heading+"\n")
	if !ok {
		t.Fatalf("README has no %q section", heading)
	}
	_, rest, ok = strings.Cut(rest, "```sh\n")
	if !ok {
		t.Fatalf("%q has no sh block", heading)
	}
	block, _, ok := strings.Cut(rest, "\n```")
	if !ok {
		t.Fatalf("the block of %q does not end", heading)
	}
	return block
}
