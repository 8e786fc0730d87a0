package cli_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/cli"
)

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// TestServeSaysWhereToGo: serve on every interface with real models and no credential prints
// localhost URLs of Studio and the docs, and how to make a first run work; GET / goes to
// Studio, on serve and on the emulator. Its data files are private.
func TestServeSaysWhereToGo(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(t.TempDir(), "data")
	env := map[string]string{"HOST": "0.0.0.0", "PORT": "0", "DATA_DIR": dataDir, "LOG_LEVEL": "warn", "SHUTDOWN_TIMEOUT": "200ms"}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := cli.RunEnv(ctx, []string{"serve"}, lookup(env), strings.NewReader(""), io.Discard, pw)
		pw.Close()
		done <- code
	}()
	defer func() {
		cancel()
		go io.Copy(io.Discard, pr)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("serve did not stop within 15 s")
		}
	}()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var out strings.Builder
	for !strings.Contains(out.String(), "--models simulated") {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("serve ended:\n%s", out.String())
			}
			out.WriteString(l + "\n")
		case <-time.After(30 * time.Second):
			t.Fatalf("serve printed no first-run hint within 30 s:\n%s", out.String())
		}
	}
	m := listening.FindStringSubmatch(out.String())
	if m == nil || !strings.HasPrefix(m[1], "http://localhost:") || strings.Contains(out.String(), "[::]") || strings.Contains(out.String(), "0.0.0.0") {
		t.Fatalf("serve announced:\n%s", out.String())
	}
	base := m[1]
	for _, want := range []string{base + "/studio\n", base + "/docs\n", "agentplane credentials add"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("serve's announcement lacks %q:\n%s", want, out.String())
		}
	}
	redirectsToStudio(t, base)

	// The database files and their directory are the server's user's only.
	for _, p := range []string{dataDir, filepath.Join(dataDir, "agentplane.db"), filepath.Join(dataDir, "agentplane.db-wal")} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: %v %v, want no access for group and others", p, fi.Mode(), err)
		}
	}
	redirectsToStudio(t, emulatorTarget(t).URL)
}

func redirectsToStudio(t *testing.T, base string) {
	t.Helper()
	resp, err := noRedirect.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/studio" {
		t.Errorf("GET %s/: %d to %q, want 302 to /studio", base, resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestVersion: agentplane version prints the version, the commit and the Go version.
func TestVersion(t *testing.T) {
	r := agentplane(t, map[string]string{}, "", "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "agentplane dev\ncommit ") || !strings.Contains(r.stdout, "\ngo1.") {
		t.Fatalf("version: %s", r)
	}
}
