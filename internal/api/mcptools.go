package api

import (
	"context"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/mcpspec"
	"github.com/agentplane/agentplane/internal/store"
)

type mcpToolCreateRequest struct {
	Name         string              `json:"name" minLength:"1" pattern:"\\S" maxLength:"200" doc:"Display name."`
	Description  string              `json:"description,omitempty" maxLength:"2000"`
	Transport    string              `json:"transport,omitempty" enum:"streamable_http,sse,stdio,http" doc:"streamable_http (the default), sse (the older HTTP+SSE transport) or stdio (a local command: 422 unless the server runs with --allow-stdio-mcp; the emulator accepts it and never runs it). http is read as streamable_http."`
	Command      string              `json:"command,omitempty" doc:"Executable to start; required for stdio, empty for the HTTP transports."`
	Args         []string            `json:"args,omitempty" doc:"Arguments of the command (stdio only)."`
	Env          domain.Env          `json:"env,omitempty" doc:"Environment variables of the command (stdio only), beside PATH, HOME, USER, LOGNAME, SHELL, TERM, TMPDIR and LANG from the server's; secrets belong in the credential."`
	URL          string              `json:"url,omitempty" doc:"Absolute http:// or https:// URL of the endpoint; required for streamable_http and sse, empty for stdio."`
	CredentialID *string             `json:"credential_id,omitempty" doc:"An api_key or bearer_token credential: sent as Authorization: Bearer <value>, or, when its metadata.header names another header, as that header (with metadata.scheme before the value, if set). A stdio command gets it in the environment variable its metadata.env names."`
	Enabled      *bool               `json:"enabled,omitempty" doc:"Defaults to true."`
	Tools        []domain.MCPToolDef `json:"tools,omitempty" doc:"The tools the server offers, if known: names unique, input_schema an object schema. POST /mcp-tools/{id}/refresh replaces them with what the server lists."`
}

type mcpToolUpdateRequest struct {
	Name         *string              `json:"name,omitempty" minLength:"1" pattern:"\\S" maxLength:"200"`
	Description  *string              `json:"description,omitempty" maxLength:"2000"`
	Transport    *string              `json:"transport,omitempty" enum:"streamable_http,sse,stdio,http" doc:"streamable_http (the default), sse (the older HTTP+SSE transport) or stdio (a local command: 422 unless the server runs with --allow-stdio-mcp; the emulator accepts it and never runs it). http is read as streamable_http. Switching between stdio and the HTTP transports also needs the other transport's fields set and this one's cleared."`
	Command      *string              `json:"command,omitempty"`
	Args         *[]string            `json:"args,omitempty"`
	Env          *domain.Env          `json:"env,omitempty" doc:"Replaces all the variables."`
	URL          *string              `json:"url,omitempty"`
	CredentialID *string              `json:"credential_id,omitempty" doc:"An empty string unlinks the credential."`
	Enabled      *bool                `json:"enabled,omitempty"`
	Tools        *[]domain.MCPToolDef `json:"tools,omitempty" doc:"Replaces the whole list."`
}

// MCPToolSelection is the object form of an entry of an agent config's tools: some of an
// MCP server's tools.
type MCPToolSelection struct {
	MCPToolID string   `json:"mcp_tool_id" minLength:"1" pattern:"\\S" doc:"The MCP tool (server)."`
	Names     []string `json:"names,omitempty" minItems:"1" doc:"The names of the tools to offer, as the server names them; absent: all of them."`
}

// toolRefSchema documents store.ToolRef, which is read and written as an id or as an
// MCPToolSelection.
type toolRefSchema struct{}

// Schema is the oneOf of the two forms.
func (toolRefSchema) Schema(r huma.Registry) *huma.Schema {
	return &huma.Schema{
		Description: "An MCP server whose tools the agent may call: its id (all its tools), or an object naming some of them.",
		OneOf: []*huma.Schema{
			{Type: huma.TypeString, Description: "An MCP tool id: all the server's tools."},
			r.Schema(reflect.TypeFor[MCPToolSelection](), true, ""),
		},
	}
}

// simFailSchema documents store.SimFail, read and written as a boolean or an object.
type simFailSchema struct{}

// Schema is the oneOf of the two forms; the object form is a named schema of its own
// (SimulationFailModels), so that code generators name it once.
func (simFailSchema) Schema(r huma.Registry) *huma.Schema {
	const name = "SimulationFailModels"
	if _, ok := r.Map()[name]; !ok {
		r.Map()[name] = &huma.Schema{Type: huma.TypeObject,
			Description:          "Model id to the HTTP status its calls fail with, at once, as a provider would (retried, then config.fallback_models).",
			AdditionalProperties: &huma.Schema{Type: huma.TypeInteger, Enum: statusEnum(domain.SimFailStatuses)}}
	}
	return &huma.Schema{
		Description: "true: every call fails after a few streamed words (never retried). An object of model id to HTTP status: calls to those models fail at once with it, before anything streams.",
		OneOf: []*huma.Schema{
			{Type: huma.TypeBoolean},
			{Ref: "#/components/schemas/" + name},
		},
	}
}

func statusEnum(statuses []int) []any {
	out := make([]any, len(statuses))
	for i, s := range statuses {
		out[i] = s
	}
	return out
}

func (s *Server) mcpToolRoutes() []route {
	const tag = "MCP tools"
	return []route{
		{method: "GET", path: v1 + "/mcp-tools", op: "listMCPTools", tag: tag, scope: "agents:read", summary: "List MCP servers", list: true,
			params: []param{{name: "transport", typ: "string", enum: append(slices.Clone(domain.MCPTransports), "http"), desc: "Only servers of this transport; http is read as streamable_http."},
				{name: "enabled", typ: "boolean", desc: "true or false."},
				{name: "q", typ: "string", desc: "Case-insensitive substring of the name or description."}},
			resp: domain.MCPTool{}, h: s.listMCPTools},
		{method: "POST", path: v1 + "/mcp-tools", op: "createMCPTool", tag: tag, scope: "agents:write", summary: "Register an MCP server",
			body: mcpToolCreateRequest{}, resp: domain.MCPTool{}, status: http.StatusCreated, creates: true, h: s.createMCPTool},
		{method: "GET", path: v1 + "/mcp-tools/templates", op: "listMCPToolTemplates", tag: tag, scope: "agents:read", list: true,
			summary: "List templates of commonly used MCP servers",
			resp:    mcpspec.Template{}, h: s.listMCPToolTemplates,
			params: []param{{name: "q", typ: "string", desc: "Case-insensitive substring of the id, name or description."}}},
		{method: "POST", path: v1 + "/mcp-tools/{id}/refresh", op: "refreshMCPTool", tag: tag, scope: "agents:write", summary: "List an MCP server's tools",
			resp: domain.MCPTool{}, h: s.refreshMCPTool},
		{method: "GET", path: v1 + "/mcp-tools/{id}", op: "getMCPTool", tag: tag, scope: "agents:read", summary: "Get an MCP server", resp: domain.MCPTool{}, h: byID(s, s.store.MCPToolGet)},
		{method: "PATCH", path: v1 + "/mcp-tools/{id}", op: "updateMCPTool", tag: tag, scope: "agents:write", summary: "Update an MCP server",
			body: mcpToolUpdateRequest{}, resp: domain.MCPTool{}, h: s.updateMCPTool},
		{method: "DELETE", path: v1 + "/mcp-tools/{id}", op: "deleteMCPTool", tag: tag, scope: "agents:write", summary: "Delete an MCP server",
			resp: domain.MCPTool{}, errs: []int{http.StatusConflict}, h: byID(s, s.store.MCPToolDelete)},
	}
}

func (s *Server) listMCPTools(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := domain.MCPToolFilter{Transport: q.Get("transport"), Query: q.Get("q")}
	if f.Transport != "" {
		// One of the documented values (the route table checks it); http reads as streamable_http.
		f.Transport = mcpspec.NormalizeTransport(f.Transport)
	}
	if f.Enabled, err = boolParam(r, "enabled"); err != nil {
		return err
	}
	items, total, err := s.store.MCPToolList(r.Context(), s.workspace(r), f, p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}

func (s *Server) createMCPTool(w http.ResponseWriter, r *http.Request) error {
	var req mcpToolCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	ws := s.workspace(r)
	t := &domain.MCPTool{WorkspaceID: ws, Name: strings.TrimSpace(req.Name), Description: req.Description, Transport: mcpspec.NormalizeTransport(req.Transport),
		Command: req.Command, Args: domain.Strings(req.Args), Env: req.Env, URL: req.URL, CredentialID: req.CredentialID, Enabled: true, Tools: req.Tools}
	if req.Enabled != nil {
		t.Enabled = *req.Enabled
	}
	if err := s.validateMCPTool(r.Context(), s.store, ws, t); err != nil {
		return err
	}
	if err := mcpspec.ValidateTools(t.Tools); err != nil {
		return err
	}
	created, err := s.store.MCPToolCreate(r.Context(), t)
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, created)
	return nil
}

func (s *Server) updateMCPTool(w http.ResponseWriter, r *http.Request) error {
	var req mcpToolUpdateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	ws, id := s.workspace(r), pathID(r, "id")
	p := domain.MCPToolPatch{Name: req.Name, Description: req.Description, Transport: req.Transport, Command: req.Command,
		Env: req.Env, URL: req.URL, CredentialID: req.CredentialID, Enabled: req.Enabled, Tools: req.Tools}
	if req.Name != nil {
		p.Name = ptr(strings.TrimSpace(*req.Name))
	}
	if req.Transport != nil {
		p.Transport = ptr(mcpspec.NormalizeTransport(*req.Transport))
	}
	if req.Tools != nil {
		// Only tools given here are checked: those a refresh stored are the server's word.
		if err := mcpspec.ValidateTools(*req.Tools); err != nil {
			return err
		}
	}
	if req.Args != nil {
		p.Args = ptr(domain.Strings(*req.Args))
	}
	var updated *domain.MCPTool
	// Read, check the merged configuration and write in one transaction, so the check holds
	// for what is stored.
	err := s.store.InTx(r.Context(), func(tx *store.Store) error {
		cur, err := tx.MCPToolGet(r.Context(), ws, id)
		if err != nil {
			return err
		}
		merged := *cur
		setIfPresent(&merged.Name, p.Name)
		setIfPresent(&merged.Description, p.Description)
		setIfPresent(&merged.Transport, p.Transport)
		setIfPresent(&merged.Command, p.Command)
		setIfPresent(&merged.Args, p.Args)
		setIfPresent(&merged.Env, p.Env)
		setIfPresent(&merged.URL, p.URL)
		setIfPresent(&merged.Tools, p.Tools)
		if p.CredentialID != nil {
			merged.CredentialID = p.CredentialID
		}
		if err := s.validateMCPTool(r.Context(), tx, ws, &merged); err != nil {
			return err
		}
		updated, err = tx.MCPToolUpdate(r.Context(), ws, id, p)
		return err
	})
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, updated)
	return nil
}

// validateMCPTool checks a configuration about to be saved: mcpspec's rules, and stdio only
// where this server may run commands.
func (s *Server) validateMCPTool(ctx context.Context, st *store.Store, ws string, t *domain.MCPTool) error {
	if err := mcpspec.Validate(ctx, st, ws, t); err != nil {
		return err
	}
	if t.Transport == "stdio" && !s.cfg.AllowStdioMCP {
		return domain.Invalid("transport", "stdio MCP servers run a command on the server's host, which this server does not allow; "+
			"start it with --allow-stdio-mcp (ALLOW_STDIO_MCP=true), or use streamable_http or sse")
	}
	return nil
}

// refreshMCPTool lists the server's tools and records the outcome on the record.
func (s *Server) refreshMCPTool(w http.ResponseWriter, r *http.Request) error {
	ctx, ws := r.Context(), s.workspace(r)
	t, err := s.store.MCPToolGet(ctx, ws, pathID(r, "id"))
	if err != nil {
		return err
	}
	tools, simulated, failure := s.engine.ListMCPTools(ctx, ws, t)
	if failure != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	if len(tools) > mcpspec.MaxTools {
		tools = tools[:mcpspec.MaxTools]
	}
	updated, err := s.store.MCPToolRefreshed(context.WithoutCancel(ctx), ws, t.ID, tools, failure, domain.Now())
	if err != nil {
		return err
	}
	var msg string
	switch {
	case failure != nil:
		msg = "the server's tools could not be listed: " + failure.Error()
	case simulated:
		msg = "not connected: MCP servers are simulated here, so the tools are the record's own (or, when it has none, its template's)"
	}
	writeJSON(w, http.StatusOK, envelope{Data: updated, Message: msg})
	return nil
}

func (s *Server) listMCPToolTemplates(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	all, err := mcpspec.Templates(r.URL.Query().Get("q"))
	if err != nil {
		return err
	}
	writeList(w, pageOf(all, p), p, len(all))
	return nil
}

// pageOf cuts one page out of a list held in memory (the built-in catalogs).
func pageOf[T any](items []T, p domain.Page) []T {
	start := min((p.Page-1)*p.Limit, len(items))
	return items[start:min(start+p.Limit, len(items))]
}

// boolParam reads an optional true/false query parameter; anything else is a 400.
func boolParam(r *http.Request, name string) (*bool, error) {
	switch v := r.URL.Query().Get(name); v {
	case "":
		return nil, nil
	case "true":
		return ptr(true), nil
	case "false":
		return ptr(false), nil
	default:
		return nil, badRequest("%s must be true or false, got %q", name, v)
	}
}

// setIfPresent overwrites *dst with *v when v is set: applying a patch to a copy of the
// stored resource, to validate the result as a whole.
func setIfPresent[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}
