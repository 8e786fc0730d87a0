package api

import (
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/triggers"
	"github.com/agentplane/agentplane/internal/triggers/platform"
)

// TriggerWithToken is a trigger as created or rotated: the only answers that carry its hook
// token.
type TriggerWithToken struct {
	domain.Trigger
	Token   string `json:"token,omitempty" doc:"The hook token, shown only now (stored as SHA-256). Empty for schedules."`
	HookURL string `json:"hook_url,omitempty" doc:"The URL to give the platform: POST (and, for WhatsApp, GET) /api/v1/hooks/{token}. Empty for schedules."`
}

// triggerTypeSchemas documents the registered trigger types wherever a trigger's type and
// config appear, so a new type is published by registering it (platform.Register) alone.
func triggerTypeSchemas(reg huma.Registry) {
	specs := platform.Specs()
	docs, secrets := make([]string, 0, len(specs)), []string{}
	for _, sp := range specs {
		docs = append(docs, sp.Doc)
		for _, f := range sp.Fields {
			if f.Kind == platform.KindSecret && !slices.Contains(secrets, f.Name) {
				secrets = append(secrets, f.Name)
			}
		}
	}
	sort.Strings(secrets)
	types := platform.Types()
	for _, name := range []string{"Execution", "ExecutionNode"} {
		if sch := reg.Map()[name]; sch != nil && sch.Properties["source"] != nil {
			src := sch.Properties["source"]
			src.Description += " Trigger types: " + strings.Join(types, ", ") + "."
		}
	}
	documentEnum(reg, "type", types, "Trigger", "TriggerWithToken", "TriggerCreateRequest")
	for _, name := range []string{"Trigger", "TriggerWithToken", "TriggerCreateRequest"} {
		sch := reg.Map()[name]
		if sch == nil {
			continue
		}
		cfg := sch.Properties["config"]
		switch {
		case cfg == nil:
		case name == "TriggerCreateRequest":
			cfg.Description = "Per-type settings (unknown keys are a 422). " + strings.Join(docs, " ") + " Secrets are encrypted at rest and shown masked."
		default:
			cfg.Description = "The per-type settings; secret fields (" + strings.Join(secrets, ", ") + ") are shown masked."
		}
	}
}

func (s *Server) triggerRoutes() []route {
	const tag = "Triggers"
	id := v1 + "/agent-triggers/{id}"
	return []route{
		{method: "GET", path: v1 + "/agent-triggers", op: "listAgentTriggers", tag: tag, scope: "agent_triggers:read", summary: "List agent triggers, newest first",
			list:   true,
			params: []param{{name: "agent_id", typ: "string"}, {name: "type", typ: "string", enum: platform.Types()}},
			resp:   domain.Trigger{}, h: s.listTriggers},
		{method: "POST", path: v1 + "/agent-triggers", op: "createAgentTrigger", tag: tag, scope: "agent_triggers:write", summary: "Create an agent trigger",
			// Not idempotent (creates: false) on purpose, like API keys: a replayed response would
			// have to keep the raw hook token, which is never stored.
			body: domain.TriggerCreateRequest{}, resp: TriggerWithToken{}, status: http.StatusCreated, h: s.createTrigger},
		{method: "GET", path: id, op: "getAgentTrigger", tag: tag, scope: "agent_triggers:read", summary: "Get an agent trigger",
			resp: domain.Trigger{}, h: byID(s, s.store.TriggerGet)},
		{method: "PATCH", path: id, op: "updateAgentTrigger", tag: tag, scope: "agent_triggers:write", summary: "Update an agent trigger",
			body: domain.TriggerUpdateRequest{}, resp: domain.Trigger{}, h: s.updateTrigger},
		{method: "DELETE", path: id, op: "deleteAgentTrigger", tag: tag, scope: "agent_triggers:write", summary: "Delete an agent trigger",
			resp: domain.Trigger{}, h: byID(s, s.store.TriggerDelete)},
		{method: "POST", path: id + "/rotate", op: "rotateAgentTrigger", tag: tag, scope: "agent_triggers:write", summary: "Rotate an agent trigger's hook token",
			resp: TriggerWithToken{}, errs: []int{http.StatusConflict}, h: s.rotateTrigger},
	}
}

// hookURL is the address of a hook token on this server: under --public-url when set, else
// the scheme and host the request came in at.
func (s *Server) hookURL(r *http.Request, token string) string {
	base := s.cfg.PublicURL
	if base == "" {
		base = s.requestBaseURL(r)
	}
	return strings.TrimRight(base, "/") + v1 + "/hooks/" + token
}

func (s *Server) listTriggers(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := domain.TriggerFilter{AgentID: q.Get("agent_id"), Type: q.Get("type")}
	// type is one of the route's documented values: the route table checks it.
	items, total, err := s.store.TriggerList(r.Context(), s.workspace(r), f, p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}

func (s *Server) createTrigger(w http.ResponseWriter, r *http.Request) error {
	var req domain.TriggerCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	c, err := s.triggers.Create(r.Context(), s.workspace(r), req)
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, s.withToken(r, c))
	return nil
}

// withToken is a created or rotated trigger as answered: with its token and hook URL, which
// are shown only now.
func (s *Server) withToken(r *http.Request, c *triggers.Created) TriggerWithToken {
	out := TriggerWithToken{Trigger: *c.Trigger}
	if c.Token != "" {
		out.Token, out.HookURL = c.Token, s.hookURL(r, c.Token)
	}
	return out
}

func (s *Server) updateTrigger(w http.ResponseWriter, r *http.Request) error {
	var req domain.TriggerUpdateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	p := triggers.Patch{Enabled: req.Enabled, Config: req.Config, InputMapping: req.InputMapping, Input: req.Input,
		WebhookURL: req.WebhookURL, WebhookSecret: req.WebhookSecret}
	var err error
	p.Name = trimmed(req.Name) // Validate has checked it
	if p.VersionID, err = patchVersionID(req.VersionID); err != nil {
		return err
	}
	t, err := s.triggers.Update(r.Context(), s.workspace(r), pathID(r, "id"), p)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, t)
	return nil
}

// patchVersionID reads a PATCH's version_id: absent (nil), null or "" (the active version), or
// a version id.
func patchVersionID(raw json.RawMessage) (**string, error) {
	text := strings.TrimSpace(string(raw))
	if text == "" {
		return nil, nil
	}
	var v *string
	if text != "null" {
		var sv string
		if err := json.Unmarshal(raw, &sv); err != nil {
			return nil, badRequest("version_id: expected string or null")
		}
		if sv != "" {
			v = &sv
		}
	}
	return &v, nil
}

func (s *Server) rotateTrigger(w http.ResponseWriter, r *http.Request) error {
	c, err := s.triggers.Rotate(r.Context(), s.workspace(r), pathID(r, "id"))
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, s.withToken(r, c))
	return nil
}
