package api

import (
	"net/http"
	"strings"

	"github.com/agentplane/agentplane/internal/mcpspec"
	"github.com/agentplane/agentplane/internal/store"
)

type mcpToolCreateRequest struct {
	Name         string             `json:"name" maxLength:"200" doc:"Display name."`
	Description  string             `json:"description,omitempty" maxLength:"2000"`
	Transport    string             `json:"transport" enum:"stdio,http"`
	Command      string             `json:"command,omitempty" doc:"Executable to start; required for stdio, empty for http."`
	Args         []string           `json:"args,omitempty" doc:"Arguments of the command (stdio only)."`
	URL          string             `json:"url,omitempty" doc:"Absolute http:// or https:// URL; required for http, empty for stdio."`
	CredentialID *string            `json:"credential_id,omitempty" doc:"Credential used to authenticate to the server."`
	Enabled      *bool              `json:"enabled,omitempty" doc:"Defaults to true."`
	Tools        []store.MCPToolDef `json:"tools,omitempty" doc:"The tools the server offers; names unique, input_schema an object schema."`
}

type mcpToolUpdateRequest struct {
	Name         *string             `json:"name,omitempty" maxLength:"200"`
	Description  *string             `json:"description,omitempty" maxLength:"2000"`
	Transport    *string             `json:"transport,omitempty" enum:"stdio,http" doc:"Switching transport also needs the other transport's fields set and this one's cleared."`
	Command      *string             `json:"command,omitempty"`
	Args         *[]string           `json:"args,omitempty"`
	URL          *string             `json:"url,omitempty"`
	CredentialID *string             `json:"credential_id,omitempty" doc:"An empty string unlinks the credential."`
	Enabled      *bool               `json:"enabled,omitempty"`
	Tools        *[]store.MCPToolDef `json:"tools,omitempty" doc:"Replaces the whole list."`
}

func (s *Server) mcpToolRoutes() []route {
	const tag = "MCP tools"
	return []route{
		{method: "GET", path: v1 + "/mcp-tools", op: "listMCPTools", tag: tag, scope: "agents:read", summary: "List MCP servers", list: true,
			params: []param{{name: "transport", typ: "string", enum: store.MCPTransports},
				{name: "enabled", typ: "boolean", desc: "true or false."},
				{name: "q", typ: "string", desc: "Case-insensitive substring of the name or description."}},
			resp: store.MCPTool{}, h: s.listMCPTools},
		{method: "POST", path: v1 + "/mcp-tools", op: "createMCPTool", tag: tag, scope: "agents:write", summary: "Register an MCP server",
			desc: "Agents use its tools once its id is listed in their config's tools.",
			body: mcpToolCreateRequest{}, resp: store.MCPTool{}, status: http.StatusCreated, creates: true, h: s.createMCPTool},
		{method: "GET", path: v1 + "/mcp-tools/templates", op: "listMCPToolTemplates", tag: tag, scope: "agents:read", list: true,
			summary: "List templates of commonly used MCP servers", desc: "A built-in catalog: each entry is a ready configuration with the tools the server offers.",
			resp: mcpspec.Template{}, h: s.listMCPToolTemplates,
			params: []param{{name: "q", typ: "string", desc: "Case-insensitive substring of the id, name or description."}}},
		{method: "GET", path: v1 + "/mcp-tools/{id}", op: "getMCPTool", tag: tag, scope: "agents:read", summary: "Get an MCP server", resp: store.MCPTool{}, h: byID(s, s.store.MCPToolGet)},
		{method: "PATCH", path: v1 + "/mcp-tools/{id}", op: "updateMCPTool", tag: tag, scope: "agents:write", summary: "Update an MCP server",
			desc: "The result must be a valid configuration as a whole.", body: mcpToolUpdateRequest{}, resp: store.MCPTool{}, h: s.updateMCPTool},
		{method: "DELETE", path: v1 + "/mcp-tools/{id}", op: "deleteMCPTool", tag: tag, scope: "agents:write", summary: "Delete an MCP server",
			desc: "Refused with 409 while an agent version lists it in its tools.", resp: store.MCPTool{}, errs: []int{http.StatusConflict}, h: byID(s, s.store.MCPToolDelete)},
	}
}

func (s *Server) listMCPTools(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := store.MCPToolFilter{Transport: q.Get("transport"), Query: q.Get("q")}
	if f.Transport != "" {
		if err := oneOf("transport", f.Transport, store.MCPTransports); err != nil {
			return badRequest("%s", err.Error())
		}
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
	t := &store.MCPTool{WorkspaceID: ws, Name: strings.TrimSpace(req.Name), Description: req.Description, Transport: req.Transport,
		Command: req.Command, Args: store.Strings(req.Args), URL: req.URL, CredentialID: req.CredentialID, Enabled: true, Tools: req.Tools}
	if req.Enabled != nil {
		t.Enabled = *req.Enabled
	}
	if err := mcpspec.Validate(r.Context(), s.store, ws, t); err != nil {
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
	p := store.MCPToolPatch{Name: req.Name, Description: req.Description, Transport: req.Transport, Command: req.Command,
		URL: req.URL, CredentialID: req.CredentialID, Enabled: req.Enabled, Tools: req.Tools}
	if req.Name != nil {
		p.Name = ptr(strings.TrimSpace(*req.Name))
	}
	if req.Args != nil {
		p.Args = ptr(store.Strings(*req.Args))
	}
	var updated *store.MCPTool
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
		setIfPresent(&merged.URL, p.URL)
		setIfPresent(&merged.Tools, p.Tools)
		if p.CredentialID != nil {
			merged.CredentialID = p.CredentialID
		}
		if err := mcpspec.Validate(r.Context(), tx, ws, &merged); err != nil {
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
func pageOf[T any](items []T, p store.Page) []T {
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
