package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/prompttmpl"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/store"
)

// Agents as MCP servers: /api/v1/mcp is a Streamable HTTP MCP server (the official go-sdk's
// server side) whose tools are the workspace's agents; calling one runs the agent through
// the engine like execute, with source mcp. The server is stateless (each POST is answered
// on its own), so any node of a cluster answers any request and the API key is checked on
// every one.

const mcpTag = "MCP server"

// mcpMessageSchema is the input schema of an agent without an object input_schema.
var mcpMessageSchema = json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The message to the agent."}},"required":["message"]}`)

func (s *Server) mcpRoutes() []route {
	desc := description("_mcp-server")
	var rs []route
	for _, m := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		name := strings.ToLower(m)
		name = strings.ToUpper(name[:1]) + name[1:]
		rs = append(rs,
			route{method: m, path: v1 + "/mcp", op: "mcpServer" + name, tag: mcpTag, scope: "agents:execute", raw: true, mcp: true,
				summary: "The workspace's agents as an MCP server (" + m + ")", desc: desc, h: s.mcpServe},
			route{method: m, path: v1 + "/mcp/agents/{id}", op: "mcpAgentServer" + name, tag: mcpTag, scope: "agents:execute", raw: true, mcp: true,
				summary: "One agent as an MCP server (" + m + ")", desc: description("_mcp-agent-server") + "\n\n" + desc, h: s.mcpServe})
	}
	return rs
}

// mcpServe answers an MCP request with a server built for the caller's workspace (and agent,
// on the narrowed path).
func (s *Server) mcpServe(w http.ResponseWriter, r *http.Request) error {
	ws := s.workspace(r)
	var agents []*domain.Agent
	if id := r.PathValue("id"); id != "" {
		a, err := s.store.AgentGet(r.Context(), ws, id)
		if err != nil {
			return err
		}
		agents = []*domain.Agent{a}
	} else {
		var err error
		if agents, err = s.allAgents(r.Context(), ws); err != nil {
			return err
		}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "agentplane", Version: s.cfg.Version}, nil)
	userID := userIDOf(r)
	for name, a := range mcpToolNames(agents) {
		if a.Config == nil {
			continue // no active version: nothing to run
		}
		srv.AddTool(mcpToolOf(name, a), s.mcpCall(r.Context(), ws, a, userID))
	}
	if err := s.addMCPPrompts(r.Context(), srv, ws); err != nil {
		return err
	}
	mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}).ServeHTTP(w, r)
	return nil
}

// allAgents reads every agent of the workspace, newest first.
func (s *Server) allAgents(ctx context.Context, ws string) ([]*domain.Agent, error) {
	var out []*domain.Agent
	for page := 1; ; page++ {
		items, total, err := s.store.AgentList(ctx, ws, domain.AgentFilter{}, domain.Page{Page: page, Limit: 100})
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		if len(items) == 0 || page*100 >= total {
			return out, nil
		}
	}
}

var invalidToolChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// mcpToolNames names each agent's tool: its name with runs of other characters made "_",
// at most 64 characters, and a suffix _2, _3 … for a name taken by an older agent.
func mcpToolNames(agents []*domain.Agent) map[string]*domain.Agent {
	out := make(map[string]*domain.Agent, len(agents))
	for i := len(agents) - 1; i >= 0; i-- { // oldest first: an older agent keeps its name
		a := agents[i]
		base := strings.Trim(invalidToolChars.ReplaceAllString(a.Name, "_"), "_")
		if base == "" {
			base = "agent"
		}
		base = base[:min(len(base), 56)]
		name := base
		for n := 2; out[name] != nil; n++ {
			name = base + "_" + strconv.Itoa(n)
		}
		out[name] = a
	}
	return out
}

// isObjectSchema reports whether a JSON Schema is of type object (what MCP requires of a
// tool's input and output schemas).
func isObjectSchema(raw json.RawMessage) bool {
	var s struct {
		Type any `json:"type"`
	}
	return hasSchema(raw) && json.Unmarshal(raw, &s) == nil && s.Type == "object"
}

func mcpToolOf(name string, a *domain.Agent) *mcp.Tool {
	t := &mcp.Tool{Name: name, Title: a.Name, Description: a.Description, InputSchema: mcpMessageSchema}
	if t.Description == "" {
		t.Description = "Runs the agent " + a.Name + "."
	}
	if isObjectSchema(a.Config.InputSchema) {
		t.InputSchema = a.Config.InputSchema
	}
	if isObjectSchema(a.Config.OutputSchema) {
		t.OutputSchema = a.Config.OutputSchema
	}
	return t
}

// toolError is a tool result that reports a failure to the calling model.
func toolError(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// mcpCall runs agent a for a tool call: its content frames become progress notifications
// (with a progress token), the call's cancellation cancels the run. The server is stateless,
// so a client cancels a call by dropping its POST: httpCtx, that request's context, ends.
func (s *Server) mcpCall(httpCtx context.Context, ws string, a *domain.Agent, userID *string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var input map[string]any
		if len(req.Params.Arguments) > 0 && json.Unmarshal(req.Params.Arguments, &input) != nil {
			return toolError("the arguments must be a JSON object"), nil
		}
		if msg, _ := input["message"].(string); !isObjectSchema(a.Config.InputSchema) && strings.TrimSpace(msg) == "" {
			return toolError("message: is required (the tool's input schema)"), nil
		}
		input, err := requireInput(a.Config, input)
		if err != nil {
			return toolError("%v", err), nil
		}
		x, run, err := s.engine.Submit(ctx, runtime.SubmitRequest{WorkspaceID: ws, Agent: a, VersionID: a.ActiveVersionID, Config: a.Config,
			Input: input, Metadata: map[string]any{"mcp_tool": req.Params.Name}, Source: "mcp", TimeoutMS: defaultTimeoutMS, UserID: userID,
			BeforeCreate: runtime.SQLHook(func(ctx context.Context, tx *store.Store, _ *domain.Execution) error {
				return s.checkExecutionLimits(ctx, tx, ws)
			})})
		if err != nil {
			return toolError("%s", s.toAPIError(&http.Request{}, err).Message), nil
		}
		progressed := make(chan struct{})
		if token := req.Params.GetProgressToken(); token != nil {
			go func() {
				defer close(progressed)
				s.mcpProgress(ctx, req.Session, token, x.ID, run)
			}()
		} else {
			close(progressed)
		}
		select {
		case <-run.Done():
		case <-ctx.Done():
		case <-httpCtx.Done():
		}
		if ctx.Err() != nil || httpCtx.Err() != nil {
			// The caller cancelled the call (or left): the run stops too.
			if _, err := s.engine.Cancel(context.WithoutCancel(ctx), ws, x.ID); err != nil && !store.IsNotFound(err) {
				s.log.Debug("cancel the run of a cancelled MCP call", "execution_id", x.ID, "error", err)
			}
			return nil, context.Canceled
		}
		<-progressed // every delta goes out before the result
		final := run.Result()
		if final == nil {
			if final, err = s.store.ExecutionGet(context.WithoutCancel(ctx), ws, x.ID); err != nil {
				return nil, err
			}
		}
		if err := runOutcomeError(final); err != nil {
			return toolError("%s", err.(*Error).Message), nil
		}
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: outputText(final.Output)}}}
		if isObjectSchema(a.Config.OutputSchema) {
			res.StructuredContent = final.Output
		}
		return res, nil
	}
}

// mcpProgress sends each content frame of run x as a progress notification until it stops;
// the frames it has not seen live by then (a run that ended before it looked) come from the
// store, so every delta is sent before the call's result.
func (s *Server) mcpProgress(ctx context.Context, ss *mcp.ServerSession, token any, id string, run *runtime.Waiter) {
	sent, n := 0, 0
	notify := func(evs []domain.Event) bool {
		for _, ev := range evs {
			if ev.Seq <= sent {
				continue
			}
			sent = ev.Seq
			text := contentOf(ev)
			if text == "" {
				continue
			}
			n++
			if err := ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(n), Message: text}); err != nil {
				return false
			}
		}
		return true
	}
	if sub, live := s.engine.Subscribe(id); live {
		for done := false; !done; {
			select {
			case <-ctx.Done():
				sub.Close()
				return
			case <-run.Done():
				done = true
			case <-sub.Signal():
			}
			evs, closed := sub.Next(sent)
			if !notify(evs) {
				sub.Close()
				return
			}
			done = done || closed
		}
		sub.Close()
	}
	select {
	case <-run.Done():
	case <-ctx.Done():
		return
	}
	if evs, err := s.store.EventList(ctx, id, sent); err == nil {
		notify(evs)
	}
}

// addMCPPrompts offers the workspace's prompts with an active template as MCP prompts: the
// template's variables are the arguments, getting one renders it as a user message.
func (s *Server) addMCPPrompts(ctx context.Context, srv *mcp.Server, ws string) error {
	for page := 1; ; page++ {
		items, total, err := s.store.PromptList(ctx, ws, domain.PromptFilter{}, domain.Page{Page: page, Limit: 100})
		if err != nil {
			return err
		}
		names := map[string]bool{}
		for _, p := range items {
			tmpl, err := prompttmpl.Parse(p.Template)
			if p.Template == "" || err != nil || names[p.Name] {
				continue // no active version, a template that does not parse, or a name taken
			}
			names[p.Name] = true
			mp := &mcp.Prompt{Name: p.Name, Description: p.Description}
			for _, v := range tmpl.Variables() {
				mp.Arguments = append(mp.Arguments, &mcp.PromptArgument{Name: v})
			}
			srv.AddPrompt(mp, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				vars := make(map[string]any, len(req.Params.Arguments))
				for k, v := range req.Params.Arguments {
					vars[k] = v
				}
				text, err := tmpl.Render(vars)
				if err != nil {
					return nil, fmt.Errorf("render prompt %s: %w", p.Name, err)
				}
				return &mcp.GetPromptResult{Description: p.Description, Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}, nil
			})
		}
		if len(items) == 0 || page*100 >= total {
			return nil
		}
	}
}
