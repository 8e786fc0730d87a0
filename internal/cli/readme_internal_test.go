package cli

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeCommandsParse checks every `agentplane …` and `go run ./cmd/agentplane …` line of
// the README's shell blocks against the command tree: the command exists, its flags parse
// and it gets the number of arguments it takes. A renamed command or flag fails it.
func TestReadmeCommandsParse(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	checked, open, inBlock := 0, false, false
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "```") {
			// A text block shows output (serve's first lines), not commands.
			open = !open
			inBlock = open && line != "```text"
			continue
		}
		line = strings.TrimSpace(line)
		if !inBlock {
			continue
		}
		var rest string
		switch {
		case strings.HasPrefix(line, "agentplane "):
			rest = strings.TrimPrefix(line, "agentplane ")
		case strings.HasPrefix(line, "go run ./cmd/agentplane "):
			rest = strings.TrimPrefix(line, "go run ./cmd/agentplane ")
		default:
			continue
		}
		args := shellWords(t, rest)
		root := newRoot(func(string) (string, bool) { return "", false })
		cmd, flags, err := root.Find(args)
		if err != nil || cmd == root {
			t.Errorf("README: %q: no such command (%v)", line, err)
			continue
		}
		if err := cmd.ParseFlags(flags); err != nil {
			t.Errorf("README: %q: %v", line, err)
			continue
		}
		if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
			t.Errorf("README: %q: %v", line, err)
		}
		checked++
	}
	if checked < 20 {
		t.Fatalf("only %d agentplane command lines found in the README", checked)
	}
}

// shellWords splits a shell command line: quotes, a trailing comment, "&" and "[…]" (optional
// flags in prose) dropped; <placeholders> stand for one argument.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var (
		out   []string
		cur   strings.Builder
		quote rune
		in    bool
	)
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == '#' && !in:
			return out
		case r == ' ' || r == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	var kept []string
	for i := 0; i < len(out); i++ {
		w := out[i]
		switch {
		case w == "&":
		case strings.HasPrefix(w, "["):
			for !strings.HasSuffix(out[i], "]") && i < len(out)-1 {
				i++
			}
		default:
			kept = append(kept, w)
		}
	}
	return kept
}
