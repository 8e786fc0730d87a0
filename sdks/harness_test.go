// Package sdks_test runs the TypeScript and Python SDKs' own test suites (node's test runner,
// pytest) against an in-process emulator and an in-process serve (SQLite, simulated models)
// per language, directly and through a proxy that cuts streams and fails requests the way
// networks do.
package sdks_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/cli"
)

// emulator is one emulator (or serve) behind a loopback server, and the proxy in front of it.
type emulator struct {
	URL    string // the server itself
	Chaos  string // the proxy: URL+"/drop" cuts streams, URL+"/flaky" fails first tries
	Key    string // the API key; "" for the emulator, which takes any
	Target string // "emulator" (seeded) or "serve" (empty: the suites make what they need)
}

// env is what the SDK test suites read.
func (e emulator) env() []string {
	key := e.Key
	if key == "" {
		key = "ap_sdk_tests"
	}
	return []string{
		"AGENTPLANE_URL=" + e.URL,
		"AGENTPLANE_API_KEY=" + key,
		"AGENTPLANE_TEST_DROP_URL=" + e.Chaos + "/drop",
		"AGENTPLANE_TEST_FLAKY_URL=" + e.Chaos + "/flaky",
		"AGENTPLANE_TEST_TARGET=" + e.Target,
	}
}

// startServe starts `serve` (SQLite, simulated models) and its chaos proxy for one test; the
// suites call it with the bootstrap key.
func startServe(t *testing.T) emulator {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := cli.NewServer(context.Background(), log, io.Discard, cli.ServerConfig{DB: cli.ServerDB(t.TempDir(), ""), Workers: 2, Models: cli.ModelsSimulated})
	if err != nil {
		t.Fatal(err)
	}
	e := behindChaos(t, srv.Handler, srv.API.CloseStreams, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return srv.Close(ctx)
	})
	e.Key, e.Target = srv.BootstrapKey, "serve"
	return e
}

// startEmulator starts a seeded emulator and its chaos proxy for one test.
func startEmulator(t *testing.T) emulator {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	emu, err := cli.NewEmulator(context.Background(), log, cli.EmulatorConfig{Seed: true, CORSOrigins: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	e := behindChaos(t, emu.Handler, emu.API.CloseStreams, emu.Close)
	e.Target = "emulator"
	return e
}

// behindChaos serves h on loopback with the chaos proxy in front, until the test ends: then
// closeStreams ends its streams and closeServer what serves h.
func behindChaos(t *testing.T, h http.Handler, closeStreams func(), closeServer func() error) emulator {
	ts := httptest.NewServer(h)
	proxy := &chaosProxy{target: ts.URL, seen: map[string]bool{}, client: &http.Client{Transport: &http.Transport{}}}
	chaos := httptest.NewServer(proxy)
	t.Cleanup(func() {
		chaos.Close()
		proxy.client.CloseIdleConnections()
		closeStreams()
		ts.Close()
		if err := closeServer(); err != nil {
			t.Error(err)
		}
	})
	return emulator{URL: ts.URL, Chaos: chaos.URL}
}

// framesPerConnection is how many frames /drop lets through before it cuts a stream.
const framesPerConnection = 2

// chaosProxy forwards to target. Under /drop it cuts every event stream after
// framesPerConnection frames. Under /flaky the first try of each request (method, URL and
// Idempotency-Key) fails: a GET with 429 and Retry-After, a POST with an Idempotency-Key is
// handled by the emulator but its answer is lost (503), so only an idempotent retry is safe.
type chaosProxy struct {
	target string
	client *http.Client
	mu     sync.Mutex
	seen   map[string]bool
}

func (p *chaosProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	mode, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.RequestURI(), "/"), "/")
	if mode == "flaky" && p.firstTry(r) {
		switch {
		case r.Method == http.MethodGet:
			w.Header().Set("Retry-After", "0")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"data":null,"error":"rate_limited","message":"injected by the test proxy"}`)
			return
		case r.Header.Get("Idempotency-Key") != "":
			if res, err := p.forward(r, "/"+rest); err == nil {
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"data":null,"error":"unavailable","message":"answer lost by the test proxy"}`)
			return
		}
	}
	res, err := p.forward(r, "/"+rest)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer res.Body.Close()
	for k, v := range res.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(res.StatusCode)
	if mode == "drop" && strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		cutAfterFrames(w, res.Body, framesPerConnection)
		return
	}
	io.Copy(w, res.Body)
}

// firstTry reports whether r is the first of its kind the proxy sees.
func (p *chaosProxy) firstTry(r *http.Request) bool {
	key := r.Method + " " + r.URL.RequestURI() + " " + r.Header.Get("Idempotency-Key")
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen[key] {
		return false
	}
	p.seen[key] = true
	return true
}

// forward sends r to the emulator at path.
func (p *chaosProxy) forward(r *http.Request, path string) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.target+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	out.Header = r.Header.Clone()
	return p.client.Do(out)
}

// cutAfterFrames copies an event stream frame by frame and breaks the connection after n.
func cutAfterFrames(w http.ResponseWriter, body io.Reader, n int) {
	flush := http.NewResponseController(w)
	buf := make([]byte, 0, 4096)
	chunk := make([]byte, 4096)
	for frames := 0; ; {
		k, err := body.Read(chunk)
		buf = append(buf, chunk[:k]...)
		for {
			i := bytes.Index(buf, []byte("\n\n"))
			if i < 0 {
				break
			}
			w.Write(buf[:i+2])
			flush.Flush()
			buf = buf[i+2:]
			if frames++; frames == n {
				// Give the client the frames, then drop the connection mid-stream.
				time.Sleep(10 * time.Millisecond)
				panic(http.ErrAbortHandler)
			}
		}
		if err != nil {
			w.Write(buf)
			return
		}
	}
}

// tool finds a program, skipping (or, where it must be there, failing) the test without it.
func tool(t *testing.T, name, hint string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		missing(t, name+" is not on PATH: "+hint)
	}
	return p
}

// missing skips the test, or fails it where the SDK tools must be there (CI).
func missing(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("AGENTPLANE_REQUIRE_CONTRACT_TOOLS") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// run runs a command in dir with env added, failing the test with its output when it fails.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0"), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, out.String())
	}
	return out.String()
}
