package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/api/openapicheck"
	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/datasource"
	"github.com/agentplane/agentplane/internal/llm/simulated"
	"github.com/agentplane/agentplane/internal/metrics"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/seed"
	"github.com/agentplane/agentplane/internal/store"
)

const testWorkspace = "2o0yqLDGdJdFRBTuhdfPNEZdAvX"

// testJWTSecret signs the login tokens of test servers.
var testJWTSecret = []byte("agentplane test jwt secret 32 b!")

// testEnv is a real server on a real in-memory store with the model catalog loaded.
type testEnv struct {
	t      *testing.T
	srv    *Server
	ts     *httptest.Server
	c      *client.Client
	store  *store.Store
	ws     string
	logBuf *strings.Builder
	oapi   *openapicheck.ResponseValidator
	// key is sent as X-API-Key by run (outside the emulator): a "*" key of ws.
	key string
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	st, err := store.Open(context.Background(), "memory")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return newTestEnvOn(t, st, true)
}

// newTestEnvOn is newTestEnv on a store the test opened (a SQLite file, say), as the emulator
// or as the server; the caller closes the store.
func newTestEnvOn(t *testing.T, st *store.Store, emulator bool) *testEnv {
	t.Helper()
	return newTestEnvWith(t, st, emulator, nil)
}

// newTestEnvWith is newTestEnvOn with the server's Config changed by override (when not nil).
func newTestEnvWith(t *testing.T, st *store.Store, emulator bool, override func(*Config)) *testEnv {
	t.Helper()
	return newTestEnvRouted(t, st, emulator, override, nil, nil)
}

// newTestEnvRouted is newTestEnvWith with the engine's model router made by router (nil:
// the simulated model answers every call) and its MCP sessions opened by tools (nil: they
// are simulated).
func newTestEnvRouted(t *testing.T, st *store.Store, emulator bool, override func(*Config),
	router func(*store.Store, *secretbox.Box) runtime.ModelRouter, tools func(*store.Store, *secretbox.Box) runtime.ToolServers) *testEnv {
	t.Helper()
	return newTestEnvEngine(t, st, emulator, override, router, tools, nil)
}

// newTestEnvEngine is newTestEnvRouted with the engine's Config changed by engine (when not nil).
func newTestEnvEngine(t *testing.T, st *store.Store, emulator bool, override func(*Config),
	router func(*store.Store, *secretbox.Box) runtime.ModelRouter, tools func(*store.Store, *secretbox.Box) runtime.ToolServers,
	engine func(*runtime.Config)) *testEnv {
	t.Helper()
	ctx := context.Background()
	if _, err := st.WorkspaceGet(ctx, testWorkspace); store.IsNotFound(err) {
		if _, err := st.WorkspaceCreate(ctx, &store.Workspace{ID: testWorkspace, Name: "Test", Slug: "test"}); err != nil {
			t.Fatal(err)
		}
		if err := seed.LoadCatalog(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	logBuf := &strings.Builder{}
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: logBuf}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	box := secretbox.NewRandom()
	var models runtime.ModelRouter = runtime.SimulatedRouter{Model: simulated.New()}
	if router != nil {
		models = router(st, box)
	}
	var toolServers runtime.ToolServers
	if tools != nil {
		toolServers = tools(st, box)
	}
	m := metrics.New()
	ecfg := runtime.Config{Store: st, Router: models, Tools: toolServers, Logger: log, Workers: 4, Metrics: m}
	if engine != nil {
		engine(&ecfg)
	}
	eng := runtime.New(ecfg)
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	reset := func(ctx context.Context) error {
		return st.InTx(ctx, func(tx *store.Store) error {
			if err := tx.Truncate(ctx); err != nil {
				return err
			}
			if _, err := tx.WorkspaceCreate(ctx, &store.Workspace{ID: testWorkspace, Name: "Test", Slug: "test"}); err != nil {
				return err
			}
			return seed.LoadCatalog(ctx, tx)
		})
	}
	var sources datasource.Executor = datasource.NewSample(st)
	if !emulator {
		sources = datasource.NewLive(datasource.LiveConfig{Store: st, Secrets: box})
	}
	t.Cleanup(func() { sources.Close() })
	cfg := Config{Store: st, Logger: log, Secrets: box, Emulator: emulator, WorkspaceID: testWorkspace,
		CORSOrigins: []string{"*"}, Engine: eng, Reset: reset, Heartbeat: 50 * time.Millisecond, JWTSecret: testJWTSecret, DataSources: sources,
		AllowStdioMCP: emulator, Metrics: m}
	if override != nil {
		override(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		srv.CloseStreams()
		ts.Close()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		eng.Stop(sctx)
	})
	v, err := validatorFor(srv.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	e := &testEnv{t: t, srv: srv, ts: ts, c: client.New(ts.URL), store: st, ws: testWorkspace, logBuf: logBuf, oapi: v}
	if !emulator {
		e.key = e.newKey(&store.APIKey{Name: "test", Scopes: store.Strings{"*"}})
		e.c = client.New(ts.URL, client.WithAPIKey(e.key))
	}
	return e
}

// validators holds one response validator per document (a string of it): compiling one took
// about 0.3 s under the race detector, and every test server of the package needs one. A
// validator is safe for concurrent use.
var validators sync.Map

func validatorFor(doc []byte) (*openapicheck.ResponseValidator, error) {
	if v, ok := validators.Load(string(doc)); ok {
		return v.(*openapicheck.ResponseValidator), nil
	}
	v, err := openapicheck.NewResponseValidator(doc)
	if err != nil {
		return nil, err
	}
	validators.Store(string(doc), v)
	return v, nil
}

// newKey stores a key of the test workspace (k's other fields as given) and returns it raw.
func (e *testEnv) newKey(k *store.APIKey) string {
	e.t.Helper()
	raw, err := auth.NewKey()
	if err != nil {
		e.t.Fatal(err)
	}
	k.WorkspaceID, k.KeyPrefix = e.ws, auth.KeyPrefix(raw)
	if _, err := e.store.APIKeyCreate(context.Background(), k, auth.HashKey(raw)); err != nil {
		e.t.Fatal(err)
	}
	return raw
}

type lockedWriter struct {
	mu chan struct{}
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	if l.mu == nil {
		l.mu = make(chan struct{}, 1)
	}
	l.mu <- struct{}{}
	defer func() { <-l.mu }()
	return l.w.Write(p)
}

// scenario is one row of a route table test.
type scenario struct {
	name    string
	method  string
	path    string
	body    string            // raw JSON; "" sends no body
	header  map[string]string // extra request headers
	status  int
	code    string         // expected error code for 4xx/5xx
	message string         // substring of the error message (e.g. the field name)
	fields  map[string]any // dotted paths into the response, e.g. "data.name" or "pagination.total"
	check   func(t *testing.T, body map[string]any)
	// undocumented marks a request no operation of the document covers (unknown route or
	// method), so only the envelope is checked, not the contract.
	undocumented bool
	// sse expects a Server-Sent Events stream ending in exactly one terminal frame.
	sse bool
	// raw skips the envelope checks, of errors too (the route answers a bare document, or
	// OpenAI's shapes).
	raw bool
}

// run executes scenarios in order (later rows may depend on earlier writes).
func (e *testEnv) run(scenarios []scenario) {
	e.t.Helper()
	for _, sc := range scenarios {
		e.t.Run(sc.name, func(t *testing.T) {
			var rd io.Reader
			if sc.body != "" {
				rd = strings.NewReader(sc.body)
			}
			req, err := http.NewRequest(sc.method, e.ts.URL+sc.path, rd)
			if err != nil {
				t.Fatal(err)
			}
			if sc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			if e.key != "" {
				req.Header.Set("X-API-Key", e.key)
			}
			for k, v := range sc.header {
				if v == "" {
					req.Header.Del(k) // e.g. send no X-API-Key at all
				} else {
					req.Header.Set(k, v)
				}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != sc.status {
				t.Fatalf("%s %s: status %d, want %d; body %s", sc.method, sc.path, resp.StatusCode, sc.status, raw)
			}
			if sc.sse && resp.StatusCode == http.StatusOK {
				checkSSE(t, resp.Header, raw)
				if err := e.oapi.ValidateStream(sc.method, req.URL.Path, resp.StatusCode, raw); err != nil {
					t.Fatalf("stream breaks the OpenAPI contract: %v", err)
				}
				covered.Store(sc.method+" "+req.URL.Path, true)
				return
			}
			// Every response of every table test is also a contract check against /openapi.json.
			if !sc.undocumented {
				covered.Store(sc.method+" "+req.URL.Path, true)
			}
			if resp.StatusCode == http.StatusNoContent {
				if err := e.oapi.Validate(sc.method, req.URL.Path, resp.StatusCode, raw); err != nil || len(raw) != 0 {
					t.Fatalf("204 response: %v, body %q", err, raw)
				}
				return
			}
			if sc.undocumented {
				// no operation to check against
			} else if err := e.oapi.Validate(sc.method, req.URL.Path, resp.StatusCode, raw); err != nil {
				t.Fatalf("response breaks the OpenAPI contract: %v", err)
			}
			var body map[string]any
			if err := json.Unmarshal(raw, &body); err != nil {
				t.Fatalf("response is not a JSON object: %s", raw)
			}
			if _, ok := body["data"]; !ok && !sc.raw {
				t.Fatalf("response has no data field: %s", raw)
			}
			if sc.status >= 400 && !sc.raw {
				if body["data"] != nil || body["error"] == nil || body["message"] == "" {
					t.Fatalf("not an error envelope: %s", raw)
				}
				if sc.code != "" && body["error"] != sc.code {
					t.Fatalf("error code %v, want %s; body %s", body["error"], sc.code, raw)
				}
				if sc.message != "" && !strings.Contains(body["message"].(string), sc.message) {
					t.Fatalf("message %q does not mention %q", body["message"], sc.message)
				}
			}
			for path, want := range sc.fields {
				got := lookup(body, path)
				if !jsonEqual(got, want) {
					t.Fatalf("%s = %#v, want %#v; body %s", path, got, want, raw)
				}
			}
			if sc.check != nil {
				sc.check(t, body)
			}
		})
	}
}

// lookup follows a dotted path ("data.config.model", "data.0.id") into decoded JSON.
func lookup(v any, path string) any {
	for _, part := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[part]
		case []any:
			i := 0
			for _, ch := range part {
				i = i*10 + int(ch-'0')
			}
			if i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func jsonEqual(got, want any) bool {
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(want)
	return string(a) == string(b)
}

// mustJSON decodes the data of a response body map into dst.
func mustJSON(t *testing.T, v any, dst any) {
	t.Helper()
	b, _ := json.Marshal(v)
	if err := json.Unmarshal(b, dst); err != nil {
		t.Fatal(err)
	}
}

// checkSSE checks a whole event stream: the headers, an id on every frame, consecutive ids,
// spec event names, and exactly one terminal frame at the end.
func checkSSE(t *testing.T, h http.Header, raw []byte) {
	t.Helper()
	if !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") || h.Get("Cache-Control") != "no-cache" || h.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("stream headers: %v", h)
	}
	allowed := map[string]bool{"execution": true, "thinking": true, "tool_start": true, "tool_end": true, "content": true, "done": true, "error": true, "item": true}
	frames := strings.Split(strings.TrimSpace(string(raw)), "\n\n")
	terminals, last := 0, -1
	for i, f := range frames {
		if strings.HasPrefix(f, ":") {
			continue
		}
		var id, event, data string
		for _, line := range strings.Split(f, "\n") {
			k, v, _ := strings.Cut(line, ": ")
			switch k {
			case "id":
				id = v
			case "event":
				event = v
			case "data":
				data = v
			}
		}
		if id == "" || !allowed[event] || !json.Valid([]byte(data)) {
			t.Fatalf("frame %d malformed: %q", i, f)
		}
		n := 0
		fmt.Sscan(id, &n)
		if last >= 0 && n != last+1 {
			t.Fatalf("frame ids jump from %d to %d", last, n)
		}
		last = n
		if event == "done" || event == "error" {
			terminals++
			if i != len(frames)-1 {
				t.Fatalf("terminal frame %d is not last", i)
			}
		}
	}
	if terminals != 1 {
		t.Fatalf("%d terminal frames in %q", terminals, raw)
	}
}
