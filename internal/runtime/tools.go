package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/llm/simulated"
	"github.com/agentplane/agentplane/internal/mcpclient"
	"github.com/agentplane/agentplane/internal/mcpspec"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/vault"
)

// ToolServers opens sessions with the MCP servers of runs (and of refreshes). There are
// two: MCPServers (serve: the servers themselves) and SimulatedTools (the emulator, and
// serve --models simulated), so the tool loop has no emulator branch.
type ToolServers interface {
	// Connect opens a session with server t for workspace ws. cfg is the configuration of
	// the run that needs it; nil for a refresh.
	Connect(ctx context.Context, ws string, cfg *domain.AgentConfig, t *domain.MCPTool) (ToolSession, error)
	// Mode is "real" or "simulated".
	Mode() string
}

// ToolSession is one open session with an MCP server; *mcpclient.Session is the real one.
type ToolSession interface {
	ListTools(ctx context.Context) ([]mcpclient.Tool, error)
	CallTool(ctx context.Context, name string, args json.RawMessage) (*mcpclient.Result, error)
	Close() error
}

var (
	_ ToolServers = (*MCPServers)(nil)
	_ ToolServers = SimulatedTools{}
	_ ToolSession = (*mcpclient.Session)(nil)
	_ ToolSession = (*simulatedSession)(nil)
)

// MCPServers reaches the MCP servers themselves, with their credentials. A version with
// config.simulation gets SimulatedTools instead: its model's tool arguments are made up,
// and must not act on real systems.
type MCPServers struct {
	Store   CredentialStore
	Secrets *secretbox.Box
	Client  *mcpclient.Client
}

// Mode is "real".
func (m *MCPServers) Mode() string { return "real" }

// Connect opens a session with the server, authenticated with its credential.
func (m *MCPServers) Connect(ctx context.Context, ws string, cfg *domain.AgentConfig, t *domain.MCPTool) (ToolSession, error) {
	if cfg != nil && cfg.Simulation != nil {
		return SimulatedTools{}.Connect(ctx, ws, cfg, t)
	}
	s := serverOf(t)
	if t.CredentialID != nil && *t.CredentialID != "" {
		cred, value, err := vault.CredentialForRun(ctx, m.Store, ws, *t.CredentialID, "", m.Secrets)
		if err != nil {
			return nil, fmt.Errorf("credential %s: %w", *t.CredentialID, err)
		}
		if err := authenticate(&s, cred, value); err != nil {
			return nil, err
		}
	}
	sess, err := m.Client.Connect(ctx, s)
	if err != nil {
		return nil, err
	}
	return sess, nil
}

// serverOf is how an MCP tool record says to reach its server, its credential apart.
func serverOf(t *domain.MCPTool) mcpclient.Server {
	s := mcpclient.Server{Transport: t.Transport, URL: t.URL, Command: t.Command, Args: t.Args}
	for _, k := range slices.Sorted(maps.Keys(t.Env)) {
		s.Env = append(s.Env, k+"="+t.Env[k])
	}
	return s
}

// authenticate adds a credential to how a server is reached. Over HTTP it goes in the header
// its metadata.header names (default Authorization), after its metadata.scheme (default
// Bearer for Authorization, nothing for another header); a stdio command gets it in the
// environment variable its metadata.env names.
func authenticate(s *mcpclient.Server, c *domain.Credential, value string) error {
	meta := func(k string) string { v, _ := c.Metadata[k].(string); return strings.TrimSpace(v) }
	if s.Transport == mcpclient.Stdio {
		env := meta("env")
		if env == "" {
			return fmt.Errorf("credential %s: a stdio server takes its credential in an environment variable; set the credential's metadata.env to its name", c.ID)
		}
		s.Env = append(s.Env, env+"="+value)
		return nil
	}
	header, scheme := meta("header"), meta("scheme")
	if header == "" {
		header = "Authorization"
	}
	if scheme == "" && strings.EqualFold(header, "Authorization") {
		scheme = "Bearer"
	}
	if scheme != "" {
		value = scheme + " " + value
	}
	s.Header = http.Header{http.CanonicalHeaderKey(header): {value}}
	return nil
}

// SimulatedTools answers tool calls without reaching any server: the server's tools are
// those of its record (or, when it has none, of the template it was made from), and a call
// gets a plausible made-up result (simulated.SimulateTool).
type SimulatedTools struct{}

// Mode is "simulated".
func (SimulatedTools) Mode() string { return "simulated" }

// Connect opens a session that never leaves the process.
func (SimulatedTools) Connect(_ context.Context, _ string, _ *domain.AgentConfig, t *domain.MCPTool) (ToolSession, error) {
	defs := t.Tools
	if len(defs) == 0 {
		if tp := mcpspec.TemplateFor(t); tp != nil {
			defs = tp.Tools
		}
	}
	return &simulatedSession{defs: defs}, nil
}

type simulatedSession struct{ defs []domain.MCPToolDef }

func (s *simulatedSession) ListTools(context.Context) ([]mcpclient.Tool, error) {
	out := make([]mcpclient.Tool, len(s.defs))
	for i, d := range s.defs {
		out[i] = mcpclient.Tool(d)
	}
	return out, nil
}

func (s *simulatedSession) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcpclient.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	i := slices.IndexFunc(s.defs, func(d domain.MCPToolDef) bool { return d.Name == name })
	if i < 0 {
		return nil, fmt.Errorf("unknown tool %q", name)
	}
	d := s.defs[i]
	text := simulated.SimulateTool(llm.ToolCall{Name: name, Arguments: args}, llm.ToolSpec{Name: d.Name, Description: d.Description, InputSchema: d.InputSchema})
	return &mcpclient.Result{Text: text}, nil
}

func (s *simulatedSession) Close() error { return nil }

// defaultToolTimeout bounds a tool call (and a refresh) when config.tool_timeout_ms is unset.
const defaultToolTimeout = 30 * time.Second

// ListMCPTools connects to an MCP server and lists its tools (POST /mcp-tools/{id}/refresh),
// within the default tool timeout. simulated reports that no server was reached: the tools
// are those of the record or its template.
func (e *Engine) ListMCPTools(ctx context.Context, ws string, t *domain.MCPTool) (tools []domain.MCPToolDef, simulated bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, defaultToolTimeout)
	defer cancel()
	sess, err := e.tools.Connect(ctx, ws, nil, t)
	if err != nil {
		return nil, false, err
	}
	defer sess.Close()
	list, err := sess.ListTools(ctx)
	if err != nil {
		return nil, false, err
	}
	tools = make([]domain.MCPToolDef, len(list))
	for i, tl := range list {
		tools[i] = domain.MCPToolDef(tl)
	}
	return tools, e.tools.Mode() == "simulated", nil
}

// spanCut bounds the arguments and the result a tool call's span keeps.
const spanCut = 8 << 10

// toolset is what a run's tool loop may call: the tools of the version's MCP servers under
// the names the model sees, and one session per server, opened at its first use and
// closed when the loop ends.
type toolset struct {
	r       *run
	timeout time.Duration
	specs   []llm.ToolSpec
	byName  map[string]boundTool
	servers []*toolServer
	// local are the tools the platform answers itself: query_<name> per data source and
	// remember (see datatools.go, memory.go).
	local map[string]localTool
}

// localTool is a tool the platform answers itself, without an MCP server. call returns an
// error only when its context ends (the call's timeout or the run's end).
type localTool interface {
	call(ctx context.Context, c llm.ToolCall, sp *domain.Span) (string, toolOutcome, error)
}

var (
	_ localTool = (*dataTool)(nil)
	_ localTool = (*rememberTool)(nil)
	_ localTool = (*askUserTool)(nil)
)

// toolServer is one MCP server of a run and its session.
type toolServer struct {
	rec  *domain.MCPTool
	sess ToolSession // nil until first needed
	err  error       // why the session could not be opened; later calls fail the same way
}

// boundTool is a tool as the model sees it: on which server, under which name there.
type boundTool struct {
	server *toolServer
	name   string
}

// tools loads the version's MCP servers and their tools, then the platform's own tools (a
// query tool per data source, remember when memory is on). A server whose record lists no
// tools is asked for them (opening the run's session with it); a server that cannot be
// asked fails the run, since the version was configured with its tools.
func (r *run) tools(ctx context.Context) (*toolset, error) {
	ts := &toolset{r: r, timeout: defaultToolTimeout, byName: map[string]boundTool{}}
	if r.cfg.ToolTimeoutMS > 0 {
		ts.timeout = time.Duration(r.cfg.ToolTimeoutMS) * time.Millisecond
	}
	var offers []offer
	for _, ref := range r.cfg.Tools {
		t, err := r.e.st.MCPToolGet(ctx, r.x.WorkspaceID, ref.MCPToolID)
		if err != nil {
			ts.close()
			return nil, fmt.Errorf("load tool %s: %w", ref.MCPToolID, err)
		}
		if !t.Enabled {
			continue
		}
		srv := &toolServer{rec: t}
		ts.servers = append(ts.servers, srv)
		defs := t.Tools
		if len(defs) == 0 {
			if defs, err = ts.list(ctx, srv); err != nil {
				ts.close()
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, fmt.Errorf("mcp tool %q (%s) lists no tools and asking its server failed: %w; refresh it (POST /api/v1/mcp-tools/%s/refresh) or check the server",
					t.Name, t.ID, err, t.ID)
			}
		}
		for _, d := range defs {
			if ref.Names == nil || slices.Contains(ref.Names, d.Name) {
				offers = append(offers, offer{srv, d})
			}
		}
	}
	used := map[string]bool{}
	for i, name := range exposedNames(offers) {
		o := offers[i]
		ts.byName[name] = boundTool{server: o.server, name: o.def.Name}
		ts.specs = append(ts.specs, llm.ToolSpec{Name: name, Description: o.def.Description, InputSchema: o.def.InputSchema})
		used[name] = true
	}
	if err := ts.addLocal(ctx, used); err != nil {
		ts.close()
		return nil, err
	}
	return ts, nil
}

// addLocal adds the data sources' query tools and the remember tool, under names no other
// tool of the run has (numbered _2, _3 … when taken).
func (ts *toolset) addLocal(ctx context.Context, used map[string]bool) error {
	ts.local = map[string]localTool{}
	add := func(spec llm.ToolSpec, t localTool) {
		base, n := spec.Name, spec.Name
		for k := 2; used[n]; k++ {
			suffix := fmt.Sprintf("_%d", k)
			n = base[:min(len(base), maxToolName-len(suffix))] + suffix
		}
		used[n], spec.Name = true, n
		ts.local[n] = t
		ts.specs = append(ts.specs, spec)
	}
	specs, tools, err := ts.r.dataTools(ctx, ts.timeout)
	if err != nil {
		return err
	}
	for i, spec := range specs {
		add(spec, tools[i])
	}
	if ts.r.memoryOn() {
		if scope, sc, missing := ts.r.memoryScope(); missing == "" {
			add(rememberSpec(scope), &rememberTool{r: ts.r, scope: scope, sc: sc})
		}
	}
	if ts.r.cfg.AskUser && ts.r.agent.Type == "agent" {
		add(askUserSpec(), &askUserTool{r: ts.r})
	}
	return nil
}

// callLocal runs a call of a platform tool within the timeout.
func (ts *toolset) callLocal(ctx context.Context, t localTool, c llm.ToolCall, sp *domain.Span) (string, toolOutcome, error) {
	callCtx, cancel := context.WithTimeout(ctx, ts.timeout)
	defer cancel()
	text, outcome, err := t.call(callCtx, c, sp)
	switch {
	case ctx.Err() != nil:
		return "", "", ctx.Err()
	case err == nil:
		return text, outcome, nil
	case callCtx.Err() != nil:
		return fmt.Sprintf("tool %s did not answer within %d ms (config.tool_timeout_ms)", c.Name, ts.timeout.Milliseconds()), toolTimeout, nil
	}
	return fmt.Sprintf("tool %s failed: %v", c.Name, err), toolFailed, nil
}

// list asks a server for its tools over the run's session with it, within the timeout.
func (ts *toolset) list(ctx context.Context, srv *toolServer) ([]domain.MCPToolDef, error) {
	sp := ts.r.span("tool", "list tools: "+srv.rec.Name, nil)
	sp.Attributes["mcp_tool_id"], sp.Attributes["server"] = srv.rec.ID, srv.rec.Name
	ctx, cancel := context.WithTimeout(ctx, ts.timeout)
	defer cancel()
	var list []mcpclient.Tool
	sess, err := ts.session(ctx, srv)
	if err == nil {
		list, err = sess.ListTools(ctx)
	}
	defs := make([]domain.MCPToolDef, len(list))
	names := make([]string, len(list))
	for i, tl := range list {
		defs[i], names[i] = domain.MCPToolDef(tl), tl.Name
	}
	ts.r.end(sp, map[string]any{"tools": names}, err)
	return defs, err
}

// session returns the run's session with a server, opening it at the first need.
func (ts *toolset) session(ctx context.Context, srv *toolServer) (ToolSession, error) {
	if srv.sess == nil && srv.err == nil {
		srv.sess, srv.err = ts.r.e.tools.Connect(ctx, ts.r.x.WorkspaceID, ts.r.cfg, srv.rec)
		if srv.err != nil && ctx.Err() != nil {
			err := srv.err
			srv.err = nil // a connect cut short by the call's timeout may be tried again
			return nil, err
		}
	}
	return srv.sess, srv.err
}

// close ends the run's sessions.
func (ts *toolset) close() {
	for _, srv := range ts.servers {
		if srv.sess != nil {
			if err := srv.sess.Close(); err != nil {
				ts.r.e.log.Debug("close mcp session", "execution_id", ts.r.x.ID, "mcp_tool_id", srv.rec.ID, "error", err)
			}
			srv.sess = nil
		}
	}
}

// toolOutcome is how a tool call went, as its span's "outcome" attribute says.
type toolOutcome string

const (
	toolOK      toolOutcome = "ok"
	toolError   toolOutcome = "tool_error"   // the tool ran and reported an error
	toolTimeout toolOutcome = "timeout"      // no answer within config.tool_timeout_ms
	toolUnknown toolOutcome = "unknown_tool" // the model named a tool it was not given
	toolFailed  toolOutcome = "failed"       // the server could not be reached or refused the call
)

// call runs one tool call on its server within the timeout and returns its result, or, when
// the outcome is not toolOK or toolError, a result whose Text says what went wrong. Only the
// run's own end (cancel, shutdown) is returned as an error.
func (ts *toolset) call(ctx context.Context, c llm.ToolCall, sp *domain.Span) (*mcpclient.Result, toolOutcome, error) {
	if t, ok := ts.local[c.Name]; ok {
		text, outcome, err := ts.callLocal(ctx, t, c, sp)
		return &mcpclient.Result{Text: text}, outcome, err
	}
	bt, ok := ts.byName[c.Name]
	if !ok {
		return &mcpclient.Result{Text: fmt.Sprintf("unknown tool %q", c.Name)}, toolUnknown, nil
	}
	sp.Attributes["mcp_tool_id"], sp.Attributes["server"], sp.Attributes["tool"] = bt.server.rec.ID, bt.server.rec.Name, bt.name
	callCtx, cancel := context.WithTimeout(ctx, ts.timeout)
	defer cancel()
	sess, err := ts.session(callCtx, bt.server)
	var res *mcpclient.Result
	if err == nil {
		res, err = sess.CallTool(callCtx, bt.name, c.Arguments)
	}
	switch {
	case ctx.Err() != nil:
		return nil, "", ctx.Err()
	case err == nil && res.IsError:
		return res, toolError, nil
	case err == nil:
		return res, toolOK, nil
	case callCtx.Err() != nil:
		return &mcpclient.Result{Text: fmt.Sprintf("tool %s did not answer within %d ms (config.tool_timeout_ms)", c.Name, ts.timeout.Milliseconds())}, toolTimeout, nil
	}
	return &mcpclient.Result{Text: fmt.Sprintf("tool %s failed: %v", c.Name, err)}, toolFailed, nil
}

// errorResult is what the model reads for a tool call that did not succeed.
func errorResult(msg string) string {
	raw, _ := json.Marshal(map[string]string{"error": msg})
	return string(raw)
}

// offer is one tool of one server, before naming.
type offer struct {
	server *toolServer
	def    domain.MCPToolDef
}

// maxToolName is the longest tool name every provider accepts (their names match
// ^[a-zA-Z0-9_-]{1,64}$).
const maxToolName = 64

// exposedNames names the offered tools for the model: the tool's own name where only one
// server offers it, "<server name>__<tool>" where several do, each made to fit the
// providers' rules (other characters become '_', at most 64) and numbered (_2, _3 …) if
// still taken.
func exposedNames(offers []offer) []string {
	servers := map[string]map[*toolServer]bool{}
	for _, o := range offers {
		n := toolName(o.def.Name)
		if servers[n] == nil {
			servers[n] = map[*toolServer]bool{}
		}
		servers[n][o.server] = true
	}
	names := make([]string, len(offers))
	used := map[string]bool{}
	for i, o := range offers {
		n := toolName(o.def.Name)
		if len(servers[n]) > 1 {
			n = toolName(o.server.rec.Name + "__" + o.def.Name)
		}
		base := n
		for k := 2; used[n]; k++ {
			suffix := fmt.Sprintf("_%d", k)
			n = base[:min(len(base), maxToolName-len(suffix))] + suffix
		}
		used[n] = true
		names[i] = n
	}
	return names
}

// toolName makes s a name every provider accepts.
func toolName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "tool"
	}
	return string(b[:min(len(b), maxToolName)])
}

// spanJSON is raw as a span keeps it: as it is when it is JSON of at most spanCut bytes,
// else as a JSON string of its first spanCut bytes (the span's attr attribute then holds
// its full size).
func spanJSON(sp *domain.Span, attr string, raw []byte) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	if len(raw) <= spanCut && json.Valid(raw) {
		return raw
	}
	s := string(raw)
	if len(s) > spanCut {
		sp.Attributes[attr] = len(raw)
		s = strings.ToValidUTF8(s[:spanCut], "") // not a character cut in two
	}
	q, _ := json.Marshal(s)
	return q
}
