// Package e2e boots agentplane's commands in-process on 127.0.0.1:0, exactly as the binary
// runs them, and drives them through the public client.
package e2e

import (
	"bufio"
	"context"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/cli"
)

// proc is a running command: its base URL, collected stderr and exit status.
type proc struct {
	URL    string
	C      *client.Client
	cancel context.CancelFunc
	done   chan int
	mu     sync.Mutex
	logs   strings.Builder
	once   sync.Once
	// Key is the API key of `serve`: the bootstrap key it printed, or the one printed by an
	// earlier run on the same database.
	Key string
}

// bootstrapMarker ends the line after which `serve` prints its bootstrap key.
const bootstrapMarker = "it will not be shown again"

// serveKeys remembers the bootstrap key of every database (DATA_DIR and DATABASE_URL), so a
// restarted `serve`, which prints no key, gets the key of its first run.
var serveKeys sync.Map

var urlRe = regexp.MustCompile(`listening on (http://\S+)`)

// start runs `agentplane <args…>` with env as its whole environment and waits until it
// logs the URL it listens on; the test fails if it exits first.
func start(t *testing.T, env map[string]string, args ...string) *proc {
	t.Helper()
	p, code := run(t, env, args...)
	if p == nil {
		t.Fatalf("agentplane %v exited with %d before listening", args, code)
	}
	return p
}

// run starts the command; it returns (proc, -1) once listening, or (nil, status) if the
// command exited first.
func run(t *testing.T, env map[string]string, args ...string) (*proc, int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	p := &proc{cancel: cancel, done: make(chan int, 1)}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	go func() {
		code := cli.RunEnv(ctx, args, lookup, strings.NewReader(""), io.Discard, pw)
		pw.Close()
		p.done <- code
	}()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sent, keyNext := false, false
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.logs.WriteString(line + "\n")
			if keyNext {
				p.Key = line
			}
			keyNext = strings.Contains(line, bootstrapMarker)
			p.mu.Unlock()
			if m := urlRe.FindStringSubmatch(line); m != nil && !sent {
				found <- m[1]
				sent = true
			}
		}
		close(found)
	}()
	select {
	case u, ok := <-found:
		if !ok {
			cancel()
			return nil, <-p.done
		}
		p.URL = u
		p.C = client.New(u)
		if len(args) > 0 && args[0] == "serve" {
			db := env["DATA_DIR"] + "|" + env["DATABASE_URL"]
			p.mu.Lock()
			if p.Key != "" {
				serveKeys.Store(db, p.Key)
			} else if k, ok := serveKeys.Load(db); ok {
				p.Key = k.(string)
			}
			key := p.Key
			p.mu.Unlock()
			p.C = client.New(u, client.WithAPIKey(key))
		}
		t.Cleanup(func() { p.stop(t) })
		return p, -1
	case <-time.After(90 * time.Second): // a -race binary migrating on a loaded 2-core machine
		cancel()
		t.Fatalf("agentplane %v did not start within 90 s", args)
		return nil, 0
	}
}

// exit runs a command that is expected to exit by itself and returns its status and stderr.
func exit(t *testing.T, env map[string]string, args ...string) (int, string) {
	t.Helper()
	var stderr strings.Builder
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := cli.RunEnv(ctx, args, lookup, strings.NewReader(""), io.Discard, &stderr)
	return code, stderr.String()
}

func (p *proc) stop(t *testing.T) {
	p.once.Do(func() { p.stopOnce(t) })
}

func (p *proc) stopOnce(t *testing.T) {
	p.cancel()
	select {
	case code := <-p.done:
		if code != 0 {
			t.Errorf("exit status %d after shutdown; logs:\n%s", code, p.Logs())
		}
	case <-time.After(15 * time.Second):
		t.Errorf("did not shut down within 15 s")
	}
}

// Logs returns what the command wrote to stderr so far.
func (p *proc) Logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs.String()
}

func emulatorEnv(extra map[string]string) map[string]string {
	env := map[string]string{"HOST": "127.0.0.1", "PORT": "0", "LOG_LEVEL": "info"}
	for k, v := range extra {
		env[k] = v
	}
	return env
}
