package runtime

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/mcpclient"
	"github.com/agentplane/agentplane/internal/mcpclient/mcptest"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
)

// script is a model that answers each call with the next of its turns, recording requests.
type script struct {
	mu    sync.Mutex
	turns []func(req llm.Request) *llm.Response
	reqs  []llm.Request
}

func (s *script) Complete(_ context.Context, req llm.Request, _ func(llm.Event) error) (*llm.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req)
	if len(s.turns) == 0 {
		return &llm.Response{Content: "the script ran out", StopReason: llm.StopEnd}, nil
	}
	next := s.turns[0]
	s.turns = s.turns[1:]
	return next(req), nil
}

func (s *script) requests() []llm.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]llm.Request(nil), s.reqs...)
}

// calls is a turn asking for tool calls.
func calls(tc ...llm.ToolCall) func(llm.Request) *llm.Response {
	return func(llm.Request) *llm.Response {
		return &llm.Response{ToolCalls: tc, StopReason: llm.StopToolCalls}
	}
}

// answer is a turn answering with the tool results it was sent, joined by " | ".
func answer() func(llm.Request) *llm.Response {
	return func(req llm.Request) *llm.Response {
		var results []string
		for _, m := range req.Messages {
			if m.Role == llm.RoleTool {
				results = append(results, m.Content)
			}
		}
		return &llm.Response{Content: strings.Join(results, " | "), StopReason: llm.StopEnd}
	}
}

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

// scriptRouter sends every model call to its script.
type scriptRouter struct{ s *script }

func (r scriptRouter) Check(context.Context, string, *domain.AgentConfig, *domain.LLMModel) error {
	return nil
}
func (r scriptRouter) Route(context.Context, string, *domain.AgentConfig, *domain.LLMModel) (*Route, error) {
	return &Route{Provider: r.s, Name: "script"}, nil
}
func (r scriptRouter) Validate(context.Context, string, *domain.Credential) (*Validation, error) {
	return nil, nil
}
func (r scriptRouter) Mode() string { return "real" }

// toolEnv is an engine whose model is a script and whose tools reach real MCP servers.
type toolEnv struct {
	t   *testing.T
	st  *store.Store
	a   *domain.Agent
	e   *Engine
	box *secretbox.Box
	s   *script
}

func newToolEnv(t *testing.T, turns ...func(llm.Request) *llm.Response) *toolEnv {
	t.Helper()
	st, a := fixture(t)
	c := mcpclient.New(mcpclient.Options{})
	t.Cleanup(c.Close)
	box := secretbox.NewRandom()
	s := &script{turns: turns}
	e := New(Config{Store: SQLStore{Store: st}, Router: scriptRouter{s}, Tools: &MCPServers{Store: st, Secrets: box, Client: c},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Workers: 2})
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(e) })
	return &toolEnv{t: t, st: st, a: a, e: e, box: box, s: s}
}

// server registers an MCP tool record for srv (tools as listed by the record: none means
// the run lists them).
func (te *toolEnv) server(name, transport, url string, tools ...domain.MCPToolDef) *domain.MCPTool {
	te.t.Helper()
	rec, err := te.st.MCPToolCreate(context.Background(), &domain.MCPTool{WorkspaceID: te.a.WorkspaceID, Name: name, Transport: transport, URL: url,
		Enabled: true, Tools: tools})
	if err != nil {
		te.t.Fatal(err)
	}
	return rec
}

// run runs an agent with cfg to its end.
func (te *toolEnv) run(cfg *domain.AgentConfig) *domain.Execution {
	te.t.Helper()
	if cfg.Model == "" {
		cfg.Model = "gpt-4o-mini"
	}
	x := submitWith(te.t, te.e, &domain.Agent{ID: te.a.ID, WorkspaceID: te.a.WorkspaceID, Name: te.a.Name, Type: "agent"}, cfg, false)
	got, err := te.st.ExecutionGet(context.Background(), x.WorkspaceID, x.ID)
	if err != nil {
		te.t.Fatal(err)
	}
	return got
}

func (te *toolEnv) toolSpans(x *domain.Execution) []*domain.Span {
	te.t.Helper()
	tr, err := te.st.TraceGet(context.Background(), x.WorkspaceID, x.TraceID)
	if err != nil {
		te.t.Fatal(err)
	}
	var out []*domain.Span
	for _, sp := range tr.Spans {
		if sp.Kind == "tool" {
			out = append(out, sp)
		}
	}
	return out
}

func (te *toolEnv) frames(x *domain.Execution, kind string) []map[string]any {
	te.t.Helper()
	evs, err := te.st.EventList(context.Background(), x.ID, 0)
	if err != nil {
		te.t.Fatal(err)
	}
	var out []map[string]any
	for _, ev := range evs {
		if ev.Event == kind {
			var d map[string]any
			_ = json.Unmarshal(ev.Data, &d)
			out = append(out, d)
		}
	}
	return out
}

func output(x *domain.Execution) string {
	var o struct{ Content string }
	_ = json.Unmarshal(x.Output, &o)
	return o.Content
}

func refs(recs ...*domain.MCPTool) []domain.ToolRef {
	out := make([]domain.ToolRef, len(recs))
	for i, r := range recs {
		out[i] = domain.ToolRef{MCPToolID: r.ID}
	}
	return out
}

// TestToolLoopOverMCP: on both transports, a run lists the tools of a server whose record
// has none, gives them to the model, calls them on one session reused across turns, sends
// the results back, and closes the session at its end; frames and spans describe each call.
func TestToolLoopOverMCP(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{mcptest.StreamableHTTP, mcptest.SSE} {
		t.Run(transport, func(t *testing.T) {
			srv := mcptest.New(transport)
			defer srv.Close()
			te := newToolEnv(t,
				calls(call("c1", "lookup_order", `{"order_id":"A-17"}`), call("c2", "stats", `{}`)),
				calls(call("c3", "lookup_order", `{"order_id":"B-2"}`)),
				answer())
			rec := te.server("Orders", transport, srv.Endpoint)
			x := te.run(&domain.AgentConfig{Tools: refs(rec)})
			if x.Status != domain.StatusCompleted {
				t.Fatalf("execution %s: %v", x.Status, x.Error)
			}
			want := `Order A-17 shipped on 2024-05-02 by DHL. | {"open":3,"orders":42} | Order B-2 shipped on 2024-05-02 by DHL.`
			if got := output(x); got != want {
				t.Errorf("output %q, want %q", got, want)
			}
			var names []string
			for _, spec := range te.s.requests()[0].Tools {
				names = append(names, spec.Name)
			}
			if strings.Join(names, ",") != "chart,fail,lookup_order,slow,stats" {
				t.Errorf("tools given to the model: %v", names)
			}
			if srv.Sessions() != 1 || srv.Calls() != 3 {
				t.Errorf("server saw %d sessions and %d calls, want 1 and 3", srv.Sessions(), srv.Calls())
			}
			waitFor(t, "the session to be closed", func() bool { return srv.Open() == 0 })

			starts, ends := te.frames(x, "tool_start"), te.frames(x, "tool_end")
			if len(starts) != 3 || len(ends) != 3 || starts[0]["name"] != "lookup_order" || ends[0]["id"] != "c1" ||
				ends[0]["summary"] != "Order A-17 shipped on 2024-05-02 by DHL." {
				t.Errorf("frames: %v / %v", starts, ends)
			}
			spans := te.toolSpans(x)
			if len(spans) != 4 || spans[0].Name != "list tools: Orders" {
				t.Fatalf("tool spans: %d", len(spans))
			}
			sp := spans[1]
			if sp.Name != "tool: lookup_order" || string(sp.Input) != `{"order_id":"A-17"}` || string(sp.Output) != `"Order A-17 shipped on 2024-05-02 by DHL."` ||
				sp.Attributes["outcome"] != "ok" || sp.Attributes["server"] != "Orders" || sp.Attributes["mcp_tool_id"] != rec.ID || sp.Status != "ok" {
				t.Errorf("span %+v (%s → %s)", sp, sp.Input, sp.Output)
			}
		})
	}
}

// TestToolFailuresGoBackToTheModel: a tool error, an unknown tool, a timeout and a server
// that is gone each answer the model with an error result, and the run completes.
func TestToolFailuresGoBackToTheModel(t *testing.T) {
	t.Parallel()
	srv := mcptest.New(mcptest.StreamableHTTP)
	defer srv.Close()
	gone := mcptest.New(mcptest.StreamableHTTP)
	gone.Close()
	te := newToolEnv(t,
		calls(call("c1", "fail", `{}`), call("c2", "nope", `{}`), call("c3", "slow", `{"ms":5000}`), call("c4", "vanished", `{}`)),
		answer())
	rec := te.server("Orders", "streamable_http", srv.Endpoint, domain.MCPToolDef{Name: "fail"}, domain.MCPToolDef{Name: "slow"})
	goneRec := te.server("Gone", "streamable_http", gone.Endpoint, domain.MCPToolDef{Name: "vanished"})
	start := time.Now()
	x := te.run(&domain.AgentConfig{Tools: refs(rec, goneRec), ToolTimeoutMS: 200})
	if x.Status != domain.StatusCompleted {
		t.Fatalf("execution %s: %v", x.Status, x.Error)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("the run took %v: the slow call was not cut at its timeout", d)
	}
	results := strings.Split(output(x), " | ")
	if len(results) != 4 {
		t.Fatalf("results %q", results)
	}
	for i, want := range []string{`{"error":"the orders database is down"}`, `{"error":"unknown tool \"nope\""}`,
		`{"error":"tool slow did not answer within 200 ms (config.tool_timeout_ms)"}`, `{"error":"tool vanished failed: connect to ` + gone.Endpoint} {
		if !strings.HasPrefix(results[i], want) {
			t.Errorf("result %d: %s, want %s…", i, results[i], want)
		}
	}
	spans := te.toolSpans(x)
	for i, want := range []string{"tool_error", "unknown_tool", "timeout", "failed"} {
		if spans[i].Attributes["outcome"] != want || spans[i].Status != "error" || spans[i].Error == nil {
			t.Errorf("span %d: outcome %v, status %s", i, spans[i].Attributes["outcome"], spans[i].Status)
		}
	}
	if ends := te.frames(x, "tool_end"); len(ends) != 4 || ends[0]["summary"] != "error: the orders database is down" {
		t.Errorf("tool_end frames %v", ends)
	}
	waitFor(t, "the slow call to be cancelled on the server", func() bool { return srv.Cancelled() == 1 })
	waitFor(t, "the session to be closed", func() bool { return srv.Open() == 0 })
}

// TestCancelDuringToolCall: cancelling the execution aborts the call in flight (the server
// sees it cancelled) and closes the session.
func TestCancelDuringToolCall(t *testing.T) {
	t.Parallel()
	srv := mcptest.New(mcptest.StreamableHTTP)
	defer srv.Close()
	te := newToolEnv(t, calls(call("c1", "slow", `{"ms":30000}`)), answer())
	rec := te.server("Orders", "streamable_http", srv.Endpoint, domain.MCPToolDef{Name: "slow"})
	ctx := context.Background()
	x, run, err := te.e.Submit(ctx, SubmitRequest{WorkspaceID: te.a.WorkspaceID, Agent: &domain.Agent{ID: te.a.ID, WorkspaceID: te.a.WorkspaceID, Type: "agent"},
		Config: &domain.AgentConfig{Model: "gpt-4o-mini", Tools: refs(rec)}, Input: map[string]any{"message": "hi"}, Source: "api", TimeoutMS: 60_000})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the call to reach the server", func() bool { return srv.Calls() == 1 })
	start := time.Now()
	if _, err := te.e.Cancel(ctx, te.a.WorkspaceID, x.ID); err != nil {
		t.Fatal(err)
	}
	<-run.Done()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancel took %v", d)
	}
	got, _ := te.st.ExecutionGet(ctx, x.WorkspaceID, x.ID)
	if got.Status != domain.StatusCancelled {
		t.Fatalf("status %s", got.Status)
	}
	waitFor(t, "the server to see the call cancelled", func() bool { return srv.Cancelled() == 1 })
	waitFor(t, "the session to be closed", func() bool { return srv.Open() == 0 })
}

// TestToolNamesAcrossServers: a tool name two servers share is namespaced per server and
// each call reaches its own server; names selects some tools of a server.
func TestToolNamesAcrossServers(t *testing.T) {
	t.Parallel()
	orders := mcptest.New(mcptest.StreamableHTTP)
	defer orders.Close()
	legacy := mcptest.New(mcptest.SSE)
	defer legacy.Close()
	te := newToolEnv(t,
		calls(call("c1", "Orders__lookup_order", `{"order_id":"A"}`), call("c2", "Old_orders__lookup_order", `{"order_id":"B"}`),
			call("c3", "stats", `{}`)),
		answer())
	def := domain.MCPToolDef{Name: "lookup_order", Description: "Look up an order by id."}
	a := te.server("Orders", "streamable_http", orders.Endpoint, def, domain.MCPToolDef{Name: "stats"}, domain.MCPToolDef{Name: "fail"})
	b := te.server("Old orders", "sse", legacy.Endpoint, def)
	x := te.run(&domain.AgentConfig{Tools: []domain.ToolRef{{MCPToolID: a.ID, Names: []string{"lookup_order", "stats"}}, {MCPToolID: b.ID}}})
	if x.Status != domain.StatusCompleted {
		t.Fatalf("execution %s: %v", x.Status, x.Error)
	}
	var names []string
	for _, spec := range te.s.requests()[0].Tools {
		names = append(names, spec.Name)
	}
	if strings.Join(names, ",") != "Orders__lookup_order,stats,Old_orders__lookup_order" {
		t.Errorf("tool names %v", names)
	}
	if orders.Calls() != 2 || legacy.Calls() != 1 || strings.Join(legacy.Args(), "") != `{"order_id":"B"}` {
		t.Errorf("calls: %d on orders, %d on legacy %v", orders.Calls(), legacy.Calls(), legacy.Args())
	}
	if sp := te.toolSpans(x)[1]; sp.Attributes["tool"] != "lookup_order" || sp.Attributes["server"] != "Old orders" {
		t.Errorf("span of the second call: %v", sp.Attributes)
	}
}

func TestExposedNames(t *testing.T) {
	t.Parallel()
	srv := func(name string) *toolServer { return &toolServer{rec: &domain.MCPTool{Name: name}} }
	a, b, c := srv("GitHub"), srv("GitHub"), srv("Files (local)")
	long := strings.Repeat("x", 70)
	got := exposedNames([]offer{
		{a, domain.MCPToolDef{Name: "search"}}, {b, domain.MCPToolDef{Name: "search"}}, // same server name too
		{c, domain.MCPToolDef{Name: "read.file"}}, {c, domain.MCPToolDef{Name: "read_file"}}, // alike once sanitised
		{a, domain.MCPToolDef{Name: long}}, {c, domain.MCPToolDef{Name: "only"}},
	})
	want := []string{"GitHub__search", "GitHub__search_2", "read_file", "read_file_2", strings.Repeat("x", 64), "only"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("names %q, want %q", got, want)
	}
}

// TestToolSpansAreCut: a span keeps at most 8 KiB of a call's arguments and result; the
// model gets the whole result.
func TestToolSpansAreCut(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("é", 10_000) // 20,000 bytes
	srv := mcptest.New(mcptest.StreamableHTTP, mcptest.Tool{Name: "echo", Description: "Echo.",
		Handle: func(_ context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
			return mcptest.Text(big), nil
		}})
	defer srv.Close()
	te := newToolEnv(t, calls(call("c1", "echo", `{"text":"`+big+`"}`)), answer())
	x := te.run(&domain.AgentConfig{Tools: refs(te.server("Echo", "streamable_http", srv.Endpoint))})
	if output(x) != big {
		t.Fatalf("the model got %d bytes of the result", len(output(x)))
	}
	sp := te.toolSpans(x)[1]
	var in, out string
	if json.Unmarshal(sp.Input, &in) != nil || json.Unmarshal(sp.Output, &out) != nil {
		t.Fatalf("span input %.40s…, output %.40s…", sp.Input, sp.Output)
	}
	if len(in) > spanCut || len(out) > spanCut || len(out) < spanCut-1 || !strings.HasPrefix(big, out) ||
		sp.Attributes["input_bytes"] != float64(len(big)+11) || sp.Attributes["output_bytes"] != float64(len(big)) {
		t.Errorf("span kept %d and %d bytes; attributes %v", len(in), len(out), sp.Attributes)
	}
}

// TestListFailureFailsTheRun: a server whose record lists no tools and that cannot be asked
// for them fails the run, saying how to fix it.
func TestListFailureFailsTheRun(t *testing.T) {
	t.Parallel()
	gone := mcptest.New(mcptest.StreamableHTTP)
	gone.Close()
	te := newToolEnv(t)
	rec := te.server("Gone", "streamable_http", gone.Endpoint)
	x := te.run(&domain.AgentConfig{Tools: refs(rec)})
	if x.Status != domain.StatusFailed || x.Error == nil || !strings.Contains(*x.Error, `mcp tool "Gone"`) || !strings.Contains(*x.Error, "/refresh") {
		t.Fatalf("execution %s: %v", x.Status, x.Error)
	}
}

// TestSimulatedVersionsDoNotReachServers: a version with config.simulation gets simulated
// tool calls even on a server that reaches MCP servers.
func TestSimulatedVersionsDoNotReachServers(t *testing.T) {
	t.Parallel()
	srv := mcptest.New(mcptest.StreamableHTTP)
	defer srv.Close()
	te := newToolEnv(t)
	rec := te.server("Orders", "streamable_http", srv.Endpoint, domain.MCPToolDef{Name: "lookup_order", Description: "Look up an order."})
	sess, err := te.e.tools.Connect(context.Background(), te.a.WorkspaceID, &domain.AgentConfig{Simulation: &domain.Simulation{}}, rec)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.CallTool(context.Background(), "lookup_order", json.RawMessage(`{"order_id":"A"}`))
	if err != nil || res.Text == "" || srv.Sessions() != 0 {
		t.Fatalf("simulated call: %+v %v; server sessions %d", res, err, srv.Sessions())
	}
}

// TestServerOf: a record's variables reach its command, in a stable order.
func TestServerOf(t *testing.T) {
	t.Parallel()
	s := serverOf(&domain.MCPTool{Transport: "stdio", Command: "npx", Args: domain.Strings{"-y", "pkg"}, Env: domain.Env{"B": "2", "A": "1"}})
	if s.Command != "npx" || strings.Join(s.Args, " ") != "-y pkg" || strings.Join(s.Env, ",") != "A=1,B=2" {
		t.Fatalf("%+v", s)
	}
}

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		transport string
		meta      domain.JSONObject
		header    http.Header
		env       []string
		err       bool
	}{
		{"streamable_http", nil, http.Header{"Authorization": {"Bearer v"}}, nil, false},
		{"sse", domain.JSONObject{"header": "x-api-key"}, http.Header{"X-Api-Key": {"v"}}, nil, false},
		{"sse", domain.JSONObject{"header": "X-Token", "scheme": "Token"}, http.Header{"X-Token": {"Token v"}}, nil, false},
		{"streamable_http", domain.JSONObject{"header": "Authorization", "scheme": "Basic"}, http.Header{"Authorization": {"Basic v"}}, nil, false},
		{"stdio", domain.JSONObject{"env": "API_KEY"}, nil, []string{"API_KEY=v"}, false},
		{"stdio", nil, nil, nil, true},
	} {
		s := mcpclient.Server{Transport: c.transport}
		err := authenticate(&s, &domain.Credential{ID: "cred", Metadata: c.meta}, "v")
		if (err != nil) != c.err || !equalHeader(s.Header, c.header) || strings.Join(s.Env, ",") != strings.Join(c.env, ",") {
			t.Errorf("%s %v: header %v, env %v, error %v", c.transport, c.meta, s.Header, s.Env, err)
		}
	}
}

func equalHeader(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if strings.Join(v, ",") != strings.Join(b[k], ",") {
			return false
		}
	}
	return true
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
