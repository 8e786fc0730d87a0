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
	"github.com/agentplane/agentplane/internal/webhook"
)

type triggerCreateRequest struct {
	AgentID       string            `json:"agent_id" minLength:"1" pattern:"\\S" doc:"The agent the trigger runs."`
	Type          string            `json:"type" required:"true" doc:"The trigger type."`
	Name          string            `json:"name" minLength:"1" pattern:"\\S" maxLength:"200"`
	Enabled       *bool             `json:"enabled,omitempty" doc:"Default true."`
	VersionID     string            `json:"version_id,omitempty" doc:"Run this version of the agent instead of its active one."`
	Config        map[string]any    `json:"config,omitempty" doc:"Per-type settings; the document lists each type's keys."`
	InputMapping  map[string]string `json:"input_mapping,omitempty" doc:"How an event becomes the run's input: input field → GJSON path. A webhook's paths read its JSON body (default: the whole body is the input); a chat platform's read {text, user, payload} (default {\"message\": \"text\"}). Not for schedules."`
	Input         map[string]any    `json:"input,omitempty" doc:"A schedule's fixed run input, checked against the agent's input_schema. Only for schedules."`
	WebhookURL    string            `json:"webhook_url,omitempty" maxLength:"2000" doc:"An absolute http(s) URL told of each run's end (completion webhook); no fragment (#…), no user:password@ (the rule of every webhook URL)."`
	WebhookSecret string            `json:"webhook_secret,omitempty" maxLength:"1000" doc:"The completion webhook's Standard Webhooks signing secret (whsec_ + base64); generated and returned once when webhook_url is given without it; encrypted at rest, never returned again."`
}

type triggerUpdateRequest struct {
	Name          *string            `json:"name,omitempty" minLength:"1" pattern:"\\S" maxLength:"200"`
	Enabled       *bool              `json:"enabled,omitempty"`
	VersionID     json.RawMessage    `json:"version_id,omitempty" doc:"A version id of the trigger's agent, or null to run the active version."`
	Config        map[string]any     `json:"config,omitempty" doc:"Merged into the config key by key: a key set to null is removed. A secret left out (or sent back masked as read) keeps its value."`
	InputMapping  *map[string]string `json:"input_mapping,omitempty" doc:"Replaces the mapping; {} restores the type's default."`
	Input         *map[string]any    `json:"input,omitempty" doc:"Replaces a schedule's run input."`
	WebhookURL    *string            `json:"webhook_url,omitempty" maxLength:"2000" doc:"\"\" removes the completion webhook."`
	WebhookSecret *string            `json:"webhook_secret,omitempty" maxLength:"1000" doc:"A new completion webhook secret; \"\" removes it."`
}

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
			body: triggerCreateRequest{}, resp: TriggerWithToken{}, status: http.StatusCreated, h: s.createTrigger},
		{method: "GET", path: id, op: "getAgentTrigger", tag: tag, scope: "agent_triggers:read", summary: "Get an agent trigger",
			resp: domain.Trigger{}, h: byID(s, s.store.TriggerGet)},
		{method: "PATCH", path: id, op: "updateAgentTrigger", tag: tag, scope: "agent_triggers:write", summary: "Update an agent trigger",
			body: triggerUpdateRequest{}, resp: domain.Trigger{}, h: s.updateTrigger},
		{method: "DELETE", path: id, op: "deleteAgentTrigger", tag: tag, scope: "agent_triggers:write", summary: "Delete an agent trigger",
			resp: domain.Trigger{}, h: byID(s, s.store.TriggerDelete)},
		{method: "POST", path: id + "/rotate", op: "rotateAgentTrigger", tag: tag, scope: "agent_triggers:write", summary: "Rotate an agent trigger's hook token",
			resp: TriggerWithToken{}, errs: []int{http.StatusConflict}, h: s.rotateTrigger},
	}
}

// checkInputMapping validates an input_mapping: at most 50 fields, each a non-empty name
// and GJSON path.
func checkInputMapping(m map[string]string) error {
	if len(m) > 50 {
		return domain.Invalid("input_mapping", "must have at most 50 fields")
	}
	for k, v := range m {
		if strings.TrimSpace(k) == "" || len(k) > 200 {
			return domain.Invalid("input_mapping", "field names must be 1 to 200 characters")
		}
		if strings.TrimSpace(v) == "" || len(v) > 500 {
			return domain.Invalid("input_mapping."+k, "must be a GJSON path of 1 to 500 characters, e.g. payload.event.text")
		}
	}
	return nil
}

// checkWebhookURL validates a completion webhook URL by the one rule of webhook URLs
// (webhook.CheckURL: absolute http or https, no fragment, no credentials).
func checkWebhookURL(v string) error {
	if v == "" {
		return nil
	}
	if err := webhook.CheckURL(v); err != nil {
		return domain.Invalid("webhook_url", "%s", err.Error())
	}
	return nil
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
	if f.Type != "" {
		if err := domain.OneOf("type", f.Type, platform.Types()); err != nil {
			return badRequest("%s", err.Error())
		}
	}
	items, total, err := s.store.TriggerList(r.Context(), s.workspace(r), f, p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}

func (s *Server) createTrigger(w http.ResponseWriter, r *http.Request) error {
	var req triggerCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := domain.FirstErr(domain.NotBlank("agent_id", req.AgentID), domain.OneOf("type", req.Type, platform.Types()), domain.NotBlank("name", req.Name),
		domain.MaxLen("name", req.Name, 200), checkWebhookURL(req.WebhookURL), domain.MaxLen("webhook_secret", req.WebhookSecret, 1000),
		checkInputMapping(req.InputMapping)); err != nil {
		return err
	}
	c, err := s.triggers.Create(r.Context(), s.workspace(r), triggers.CreateInput{AgentID: req.AgentID, Type: req.Type, Name: req.Name,
		Enabled: req.Enabled, VersionID: req.VersionID, Config: req.Config, InputMapping: req.InputMapping, Input: req.Input,
		WebhookURL: req.WebhookURL, WebhookSecret: req.WebhookSecret})
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
	var req triggerUpdateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	p := triggers.Patch{Enabled: req.Enabled, Config: req.Config, InputMapping: req.InputMapping, Input: req.Input,
		WebhookURL: req.WebhookURL, WebhookSecret: req.WebhookSecret}
	var err error
	if p.Name, err = patchName(req.Name); err != nil {
		return err
	}
	if p.VersionID, err = patchVersionID(req.VersionID); err != nil {
		return err
	}
	if req.InputMapping != nil {
		if err := checkInputMapping(*req.InputMapping); err != nil {
			return err
		}
	}
	if req.WebhookURL != nil {
		if err := checkWebhookURL(*req.WebhookURL); err != nil {
			return err
		}
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
