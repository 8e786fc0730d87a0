package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHistoryKeepsTheLastLines: the chat history file keeps the last historyKeep lines, with
// mode 0600, and /history shows the newest.
func TestHistoryKeepsTheLastLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agentplane", "history")
	var lines []string
	for i := range historyKeep + 500 {
		lines = append(lines, fmt.Sprintf("message %d", i))
	}
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	h := &history{path: path}
	h.load()
	h.add("newest")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(got) != historyKeep+1 || got[0] != "message 500" || got[len(got)-1] != "newest" {
		t.Fatalf("history file has %d lines, from %q to %q", len(got), got[0], got[len(got)-1])
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Fatalf("history mode %04o", info.Mode().Perm())
	}
	if last := h.last(2); len(last) != 2 || last[0] != fmt.Sprintf("message %d", historyKeep+499) || last[1] != "newest" {
		t.Fatalf("last: %q", last)
	}
}
