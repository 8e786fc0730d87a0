package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/agentplane/agentplane/internal/agentconfig"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/store"
)

// DefaultModel is the model of an agent created without a config.
const DefaultModel = "gpt-4o-mini"

// agentTypeSchemas documents the agent types (declared in internal/agentconfig) wherever an
// agent's type appears.
func agentTypeSchemas(reg huma.Registry) {
	documentEnum(reg, "type", agentconfig.Types(), "Agent", "AgentCreateRequest")
	var kinds []string
	for _, name := range agentconfig.Types() {
		t, _ := agentconfig.LookupType(name)
		kinds = append(kinds, name+" ("+t.Doc+")")
	}
	for _, name := range []string{"Agent", "AgentCreateRequest"} {
		if sch := reg.Map()[name]; sch != nil && sch.Properties["type"] != nil {
			sch.Properties["type"].Description = "The agent type: " + strings.Join(kinds, ", ") + "."
		}
	}
}

// agentVersionCreateRequest is domain.AgentVersionCreateRequest with its schema: config as a
// merge patch when the version starts from a base (TransformSchema).
type agentVersionCreateRequest domain.AgentVersionCreateRequest

// TransformSchema documents config as a merge patch when the version starts from a base: its
// model may be left out then (AgentConfigPatch), and only then.
func (agentVersionCreateRequest) TransformSchema(r huma.Registry, s *huma.Schema) *huma.Schema {
	const name = "AgentConfigPatch"
	if _, ok := r.Map()[name]; !ok {
		patch := *r.Map()["AgentConfig"]
		patch.Required = slices.DeleteFunc(slices.Clone(patch.Required), func(f string) bool { return f == "model" })
		patch.Description = "An agent config in which every field may be left out: with base_version_id or base, a merge patch."
		r.Map()[name] = &patch
	}
	s.Properties["config"] = &huma.Schema{Ref: "#/components/schemas/" + name, Description: s.Properties["config"].Description}
	s.AnyOf = []*huma.Schema{
		{Required: []string{"config"}, Properties: map[string]*huma.Schema{"config": {Required: []string{"model"}}}},
		{Required: []string{"base_version_id"}, Properties: map[string]*huma.Schema{"base_version_id": {MinLength: ptr(1)}}},
		{Required: []string{"base"}, Properties: map[string]*huma.Schema{"base": {MinLength: ptr(1)}}},
	}
	return s
}

// AgentPreview is what an execution would send to the model, without calling it.
type AgentPreview struct {
	AgentID   string              `json:"agent_id"`
	VersionID *string             `json:"version_id" doc:"The version previewed; null for an unsaved config."`
	Model     string              `json:"model"`
	Messages  []runtime.Message   `json:"messages"`
	Variables []string            `json:"variables" doc:"Variables the prompt template uses."`
	Missing   []string            `json:"missing" doc:"Template variables the input does not supply."`
	Config    *domain.AgentConfig `json:"config" nullable:"false" doc:"The configuration previewed."`
}

func (s *Server) agentRoutes() []route {
	const tag = "Agents"
	return []route{
		{method: "GET", path: v1 + "/agents", op: "listAgents", tag: tag, scope: "agents:read", summary: "List agents", list: true,
			params: []param{{name: "type", typ: "string", enum: agentconfig.Types()}, {name: "status", typ: "string", enum: domain.AgentStatuses},
				{name: "q", typ: "string", desc: "Case-insensitive substring of the name or description."}},
			resp: domain.Agent{}, h: s.listAgents},
		{method: "POST", path: v1 + "/agents", op: "createAgent", tag: tag, scope: "agents:write", summary: "Create an agent (and its version 1)",
			body: domain.AgentCreateRequest{}, resp: domain.Agent{}, status: http.StatusCreated, creates: true, plan: true, h: s.createAgent},
		{method: "GET", path: v1 + "/agents/{id}", op: "getAgent", tag: tag, scope: "agents:read", summary: "Get an agent", resp: domain.Agent{}, h: byID(s, s.store.AgentGet)},
		{method: "PATCH", path: v1 + "/agents/{id}", op: "updateAgent", tag: tag, scope: "agents:write", summary: "Update an agent's name, description, status, tags, metadata or webhook",
			body: domain.AgentUpdateRequest{}, resp: domain.Agent{}, h: s.updateAgent},
		{method: "DELETE", path: v1 + "/agents/{id}", op: "deleteAgent", tag: tag, scope: "agents:write", summary: "Delete an agent and its versions",
			resp: domain.Agent{}, h: byID(s, s.store.AgentDelete)},
		{method: "GET", path: v1 + "/agents/{id}/versions", op: "listAgentVersions", tag: tag, scope: "agents:read", summary: "List an agent's versions, newest first",
			list: true, resp: domain.AgentVersion{}, h: childList(s, s.store.AgentVersionList)},
		{method: "POST", path: v1 + "/agents/{id}/versions", op: "createAgentVersion", tag: tag, scope: "agents:write", summary: "Create a version",
			body: agentVersionCreateRequest{}, resp: domain.AgentVersion{}, status: http.StatusCreated, creates: true, h: s.createAgentVersion},
		{method: "GET", path: v1 + "/agents/{id}/versions/{version_id}", op: "getAgentVersion", tag: tag, scope: "agents:read", summary: "Get a version",
			resp: domain.AgentVersion{}, h: versionByID(s, s.store.AgentVersionGet)},
		{method: "POST", path: v1 + "/agents/{id}/versions/{version_id}/promote", op: "promoteAgentVersion", tag: tag, scope: "agents:write",
			summary: "Make a version the active one", resp: domain.Agent{}, h: promoteVersion(s, s.store.AgentVersionPromote, s.store.AgentGet)},
		{method: "POST", path: v1 + "/agents/{id}/preview", op: "previewAgent", tag: tag, scope: "agents:read",
			summary: "Validate input and show the messages an execution would send",
			body:    domain.AgentPreviewRequest{}, resp: AgentPreview{}, h: s.previewAgent},
	}
}

func (s *Server) listAgents(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := domain.AgentFilter{Type: q.Get("type"), Status: q.Get("status"), Query: q.Get("q")}
	// type and status are documented enums: the route table checks it against the documented values.
	items, total, err := s.store.AgentList(r.Context(), s.workspace(r), f, p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}

func (s *Server) createAgent(w http.ResponseWriter, r *http.Request) error {
	var req domain.AgentCreateRequest
	body, err := decodeKeep(w, r, &req)
	if err != nil {
		return err
	}
	if err := checkConfigKeys(body, "config"); err != nil {
		return err
	}
	hook := webhookChangeOf(body, &req.WebhookURL, &req.WebhookSecret)
	if err := req.Validate(); err != nil {
		return err
	}
	if req.Status == "" {
		req.Status = "active"
	}
	ws := s.workspace(r)
	cfg, msg := req.Config, ""
	if cfg == nil {
		cfg = &domain.AgentConfig{Model: DefaultModel}
		msg = fmt.Sprintf("no config was sent: version 1 uses the default model %s; "+
			"choose another with POST /api/v1/agents/{id}/versions and promote it", DefaultModel)
	}
	if err := agentconfig.Validate(r.Context(), s.store, ws, req.Type, "", cfg); err != nil {
		return err
	}
	var a *domain.Agent
	var secret string
	err = s.store.InTx(r.Context(), func(tx *store.Store) error {
		if err := s.checkAgentLimit(r.Context(), tx, ws); err != nil {
			return err
		}
		var err error
		a, err = tx.AgentCreate(r.Context(), &domain.Agent{
			WorkspaceID: ws, Name: strings.TrimSpace(req.Name), Description: req.Description, Type: req.Type, Status: req.Status,
			Tags: domain.Strings(req.Tags), Metadata: domain.JSONObject(req.Metadata),
		}, cfg, req.Notes)
		if err != nil || hook.url == nil {
			return err
		}
		if secret, err = s.applyWebhook(r.Context(), tx, ws, a.ID, hook); err != nil {
			return err
		}
		a, err = tx.AgentGet(r.Context(), ws, a.ID)
		return err
	})
	if err != nil {
		return err
	}
	writeAgentWithSecret(w, http.StatusCreated, a, secret, msg)
	return nil
}

func (s *Server) updateAgent(w http.ResponseWriter, r *http.Request) error {
	var req domain.AgentUpdateRequest
	body, err := decodeKeep(w, r, &req)
	if err != nil {
		return err
	}
	hook := webhookChangeOf(body, &req.WebhookURL, &req.WebhookSecret)
	if err := req.Validate(); err != nil {
		return err
	}
	var p domain.AgentPatch
	p.Name = trimmed(req.Name) // Validate has checked it
	p.Description = req.Description
	p.Status = req.Status
	if req.Tags != nil {
		p.Tags = ptr(domain.Strings(*req.Tags))
	}
	if req.Metadata != nil {
		p.Metadata = ptr(domain.JSONObject(*req.Metadata))
	}
	ws, id := s.workspace(r), pathID(r, "id")
	var a *domain.Agent
	var secret string
	err = s.store.InTx(r.Context(), func(tx *store.Store) error {
		var err error
		if a, err = tx.AgentUpdate(r.Context(), ws, id, p); err != nil || hook.empty() {
			return err
		}
		if secret, err = s.applyWebhook(r.Context(), tx, ws, id, hook); err != nil {
			return err
		}
		a, err = tx.AgentGet(r.Context(), ws, id)
		return err
	})
	if err != nil {
		return err
	}
	writeAgentWithSecret(w, http.StatusOK, a, secret, "")
	return nil
}

func (s *Server) createAgentVersion(w http.ResponseWriter, r *http.Request) error {
	var req agentVersionCreateRequest
	body, err := decodeKeep(w, r, &req)
	if err != nil {
		return err
	}
	ws, id := s.workspace(r), pathID(r, "id")
	a, err := s.store.AgentGet(r.Context(), ws, id)
	if err != nil {
		return err
	}
	if err := checkConfigKeys(body, "config"); err != nil {
		return err
	}
	if err := (*domain.AgentVersionCreateRequest)(&req).Validate(); err != nil {
		return err
	}
	if req.BaseVersionID != "" || req.Base != "" {
		if req.Config, err = s.patchedConfig(r, a, req.BaseVersionID, req.Base, bodyField(body, "config")); err != nil {
			return err
		}
	}
	if err := agentconfig.Validate(r.Context(), s.store, ws, a.Type, id, &req.Config); err != nil {
		return err
	}
	v, err := s.store.AgentVersionCreate(r.Context(), &domain.AgentVersion{WorkspaceID: ws, AgentID: id, Config: req.Config, Notes: req.Notes})
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, v)
	return nil
}

// patchedConfig applies a merge patch (RFC 7396) to the config of the version a version
// request starts from: base_version_id, or the active version for base "active".
func (s *Server) patchedConfig(r *http.Request, a *domain.Agent, baseVersionID, base string, patch json.RawMessage) (domain.AgentConfig, error) {
	var cfg domain.AgentConfig
	var from *domain.AgentConfig
	switch {
	case base == "active":
		if a.Config == nil {
			return cfg, conflict("agent %s has no active version to start from", a.ID)
		}
		from = a.Config
	default:
		v, err := s.store.AgentVersionGet(r.Context(), a.WorkspaceID, a.ID, baseVersionID)
		if store.IsNotFound(err) {
			return cfg, &store.ReferenceError{Field: "base_version_id", Resource: "agent version", ID: baseVersionID}
		}
		if err != nil {
			return cfg, err
		}
		from = &v.Config
	}
	doc, err := json.Marshal(from)
	if err != nil {
		return cfg, err
	}
	if patch != nil {
		var target, p any
		if err := json.Unmarshal(doc, &target); err != nil {
			return cfg, err
		}
		if err := json.Unmarshal(patch, &p); err != nil {
			return cfg, badRequest("config: %s", err.Error())
		}
		if _, isObj := p.(map[string]any); !isObj {
			return cfg, badRequest("config: with base_version_id or base, config must be an object of the fields to change")
		}
		if doc, err = json.Marshal(mergePatch(target, p)); err != nil {
			return cfg, err
		}
	}
	if err := json.Unmarshal(doc, &cfg); err != nil {
		return cfg, domain.Invalid("config", "the merged configuration is not valid: %s", err.Error())
	}
	return cfg, nil
}

// mergePatch applies an RFC 7396 JSON Merge Patch: an object patch merges key by key
// (recursively), a null value deletes the key, anything else replaces the target.
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = mergePatch(t[k], v)
	}
	return t
}

func (s *Server) previewAgent(w http.ResponseWriter, r *http.Request) error {
	var req domain.AgentPreviewRequest
	body, err := decodeKeep(w, r, &req)
	if err != nil {
		return err
	}
	if err := checkConfigKeys(body, "config"); err != nil {
		return err
	}
	ws, id := s.workspace(r), pathID(r, "id")
	a, err := s.store.AgentGet(r.Context(), ws, id)
	if err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	var cfg *domain.AgentConfig
	var versionID *string
	switch {
	case req.Config != nil:
		if err := agentconfig.Validate(r.Context(), s.store, ws, a.Type, id, req.Config); err != nil {
			return err
		}
		cfg = req.Config
	case req.VersionID != "":
		v, err := s.store.AgentVersionGet(r.Context(), ws, id, req.VersionID)
		if err != nil {
			return err
		}
		cfg, versionID = &v.Config, &v.ID
	default:
		if a.Config == nil {
			return conflict("agent %s has no active version", id)
		}
		cfg, versionID = a.Config, a.ActiveVersionID
	}
	if req.Input == nil {
		req.Input = map[string]any{}
	}
	if err := cfg.CheckInput(req.Input); err != nil {
		return err
	}
	rendered, err := runtime.Render(r.Context(), s.store, ws, cfg, req.Input)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, AgentPreview{AgentID: id, VersionID: versionID, Model: cfg.Model, Messages: rendered.Messages,
		Variables: rendered.Variables, Missing: rendered.Missing, Config: cfg})
	return nil
}
