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
	"github.com/agentplane/agentplane/internal/domain"
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

// envConfig is what a test server is built from; envOptions change it.
type envConfig struct {
	store    *store.Store
	emulator bool
	server   func(*Config)
	router   func(*store.Store, *secretbox.Box) runtime.ModelRouter
	tools    func(*store.Store, *secretbox.Box) runtime.ToolServers
	engine   func(*runtime.Config)
}

// envOption changes how newTestEnv builds its server.
type envOption func(*envConfig)

// onStore runs the server on a store the test opened (a SQLite file, PostgreSQL); the caller
// closes it. Without it the server has an in-memory store of its own.
func onStore(st *store.Store) envOption { return func(c *envConfig) { c.store = st } }

// asServer runs the product's server (API keys, plans, live data sources) instead of the
// emulator; run then sends a "*" key of the workspace.
func asServer() envOption { return func(c *envConfig) { c.emulator = false } }

// emulatorIf runs the emulator when emulator is true, else the server (for tests of both).
func emulatorIf(emulator bool) envOption { return func(c *envConfig) { c.emulator = emulator } }

// withConfig changes the server's Config before the server is made.
func withConfig(f func(*Config)) envOption { return func(c *envConfig) { c.server = f } }

// withRouter makes the engine's model router (default: the simulated model answers every call).
func withRouter(f func(*store.Store, *secretbox.Box) runtime.ModelRouter) envOption {
	return func(c *envConfig) { c.router = f }
}

// withTools makes the engine's MCP sessions (default: simulated).
func withTools(f func(*store.Store, *secretbox.Box) runtime.ToolServers) envOption {
	return func(c *envConfig) { c.tools = f }
}

// withEngine changes the engine's Config before the engine is made.
func withEngine(f func(*runtime.Config)) envOption { return func(c *envConfig) { c.engine = f } }

// newTestEnv starts a real server (the emulator unless asServer) on a real store with the test
// workspace and the model catalog, changed by opts.
func newTestEnv(t *testing.T, opts ...envOption) *testEnv {
	t.Helper()
	c := envConfig{emulator: true}
	for _, o := range opts {
		o(&c)
	}
	if c.store == nil {
		st, err := store.Open(context.Background(), "memory")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		c.store = st
	}
	return c.start(t)
}

// start builds the engine and the server of c and serves them on a loopback port until the
// test ends.
func (c envConfig) start(t *testing.T) *testEnv {
	t.Helper()
	st := c.store
	ensureTestWorkspace(t, st)

	// The engine: the simulated model and simulated MCP sessions unless the test makes its own.
	logBuf := &strings.Builder{}
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: logBuf}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	box := secretbox.NewRandom()
	m := metrics.New()
	eng := c.startEngine(t, box, log, m)

	// The server: sample data sources in the emulator, live ones on the server.
	var sources datasource.Executor = seed.NewSample(st)
	if !c.emulator {
		sources = datasource.NewLive(datasource.LiveConfig{Store: st, Secrets: box})
	}
	t.Cleanup(func() { sources.Close() })
	cfg := Config{Store: st, Logger: log, Secrets: box, Emulator: c.emulator, WorkspaceID: testWorkspace,
		CORSOrigins: []string{"*"}, Engine: eng, Reset: resetTestStore(st), Heartbeat: 50 * time.Millisecond, JWTSecret: testJWTSecret, DataSources: sources,
		AllowStdioMCP: c.emulator, Metrics: m}
	if c.server != nil {
		c.server(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}

	// Serve it; the engine stops after the server.
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

	// The server needs a key: a "*" one of the test workspace.
	e := &testEnv{t: t, srv: srv, ts: ts, c: client.New(ts.URL), store: st, ws: testWorkspace, logBuf: logBuf, oapi: v}
	if !c.emulator {
		e.key = e.newKey(&domain.APIKey{Name: "test", Scopes: domain.Strings{"*"}})
		e.c = client.New(ts.URL, client.WithAPIKey(e.key))
	}
	return e
}

// startEngine starts the engine of c (stopped by the caller).
func (c envConfig) startEngine(t *testing.T, box *secretbox.Box, log *slog.Logger, m *metrics.Metrics) *runtime.Engine {
	t.Helper()
	var models runtime.ModelRouter = runtime.SimulatedRouter{Model: simulated.New()}
	if c.router != nil {
		models = c.router(c.store, box)
	}
	var toolServers runtime.ToolServers
	if c.tools != nil {
		toolServers = c.tools(c.store, box)
	}
	ecfg := runtime.Config{Store: runtime.SQLStore{Store: c.store}, Router: models, Tools: toolServers, Logger: log, Workers: 4, Metrics: m}
	if c.engine != nil {
		c.engine(&ecfg)
	}
	eng := runtime.New(ecfg)
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return eng
}

// ensureTestWorkspace creates the test workspace with the model catalog, unless st has it
// (a store shared by several test servers).
func ensureTestWorkspace(t *testing.T, st *store.Store) {
	t.Helper()
	ctx := context.Background()
	if _, err := st.WorkspaceGet(ctx, testWorkspace); !store.IsNotFound(err) {
		return
	}
	if _, err := st.WorkspaceCreate(ctx, &domain.Workspace{ID: testWorkspace, Name: "Test", Slug: "test"}); err != nil {
		t.Fatal(err)
	}
	if err := seed.LoadCatalog(ctx, st); err != nil {
		t.Fatal(err)
	}
}

// resetTestStore is the server's Reset: the store emptied, then the test workspace and the
// catalog again, in one transaction.
func resetTestStore(st *store.Store) func(context.Context) error {
	return func(ctx context.Context) error {
		return st.InTx(ctx, func(tx *store.Store) error {
			if err := tx.Truncate(ctx); err != nil {
				return err
			}
			if _, err := tx.WorkspaceCreate(ctx, &domain.Workspace{ID: testWorkspace, Name: "Test", Slug: "test"}); err != nil {
				return err
			}
			return seed.LoadCatalog(ctx, tx)
		})
	}
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
func (e *testEnv) newKey(k *domain.APIKey) string {
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
