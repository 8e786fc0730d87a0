package api

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/triggers"
	"github.com/agentplane/agentplane/internal/triggers/platform"
	"github.com/agentplane/agentplane/internal/webhook"
)

type triggerCreateRequest struct {
	AgentID       string            `json:"agent_id" minLength:"1" pattern:"\\S" doc:"The agent the trigger runs."`
	Type          string            `json:"type" enum:"webhook,slack,telegram,teams,whatsapp,schedule"`
	Name          string            `json:"name" minLength:"1" pattern:"\\S" maxLength:"200"`
	Enabled       *bool             `json:"enabled,omitempty" doc:"Default true."`
	VersionID     string            `json:"version_id,omitempty" doc:"Run this version of the agent instead of its active one."`
	Config        map[string]any    `json:"config,omitempty" doc:"Per-type settings (unknown keys are a 422). webhook: signing_secret (a Standard Webhooks whsec_… secret, optional), respond (async, the default, or sync). slack: signing_secret, bot_credential_id, bot_user_id (optional: the bot's own user id, whose messages are ignored). telegram: secret_token, bot_credential_id. whatsapp: verify_token, app_secret, phone_number_id, credential_id. teams: hmac_secret (the base64 security token Teams shows). schedule: cron (five fields), timezone (IANA, default UTC), catch_up (default false). Secrets are encrypted at rest and shown masked."`
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
	store.Trigger
	Token   string `json:"token,omitempty" doc:"The hook token, shown only now (stored as SHA-256). Empty for schedules."`
	HookURL string `json:"hook_url,omitempty" doc:"The URL to give the platform: POST (and, for WhatsApp, GET) /api/v1/hooks/{token}. Empty for schedules."`
}

func (s *Server) triggerRoutes() []route {
	const tag = "Triggers"
	id := v1 + "/agent-triggers/{id}"
	return []route{
		{method: "GET", path: v1 + "/agent-triggers", op: "listAgentTriggers", tag: tag, scope: "agent_triggers:read", summary: "List agent triggers, newest first",
			desc: "The workspace's triggers, newest first. Secrets are masked and hook tokens never shown. Filter by `agent_id` or `type`.", list: true,
			params: []param{{name: "agent_id", typ: "string"}, {name: "type", typ: "string", enum: store.TriggerTypes}},
			resp:   store.Trigger{}, h: s.listTriggers},
		{method: "POST", path: v1 + "/agent-triggers", op: "createAgentTrigger", tag: tag, scope: "agent_triggers:write", summary: "Create an agent trigger",
			desc: "Creates a webhook, chat platform (slack, telegram, teams, whatsapp) or schedule trigger of an agent. The answer carries `token` and `hook_url` once (not for schedules): " +
				"give hook_url to the platform. Config keys are checked per type (an unknown key is a 422 naming it); secrets are encrypted at rest and shown masked. " +
				"A schedule gets `next_run_at`; its `input` is checked against the agent's input_schema. " +
				"Idempotency-Key is not honoured here (a replay would need the token, which is never stored).",
			// Not idempotent (creates: false) on purpose, like API keys: a replayed response would
			// have to keep the raw hook token, which is never stored.
			body: triggerCreateRequest{}, resp: TriggerWithToken{}, status: http.StatusCreated, h: s.createTrigger},
		{method: "GET", path: id, op: "getAgentTrigger", tag: tag, scope: "agent_triggers:read", summary: "Get an agent trigger",
			desc: "One trigger with its secrets masked; the hook token is never shown again (rotate to get a new one).", resp: store.Trigger{}, h: byID(s, s.store.TriggerGet)},
		{method: "PATCH", path: id, op: "updateAgentTrigger", tag: tag, scope: "agent_triggers:write", summary: "Update an agent trigger",
			desc: "Changes the given fields. `config` is merged key by key (null removes a key) and checked again as a whole; a schedule whose cron, time zone or enabled flag changes gets a new `next_run_at`.",
			body: triggerUpdateRequest{}, resp: store.Trigger{}, h: s.updateTrigger},
		{method: "DELETE", path: id, op: "deleteAgentTrigger", tag: tag, scope: "agent_triggers:write", summary: "Delete an agent trigger",
			desc: "Deletes the trigger: its hook URL stops working at once. Its chat sessions and executions stay.", resp: store.Trigger{}, h: byID(s, s.store.TriggerDelete)},
		{method: "POST", path: id + "/rotate", op: "rotateAgentTrigger", tag: tag, scope: "agent_triggers:write", summary: "Rotate an agent trigger's hook token",
			desc: "Issues a new hook token (shown once, with its hook_url); the old one stops working at once. A schedule has no token: 409.",
			resp: TriggerWithToken{}, errs: []int{http.StatusConflict}, h: s.rotateTrigger},
	}
}

// triggerField is one config key a trigger type accepts.
type triggerField struct {
	name     string
	kind     string // "secret", "text", "credential", "enum", "bool"
	required bool
	enum     []string
	check    func(string) error // extra check of a text or secret value
}

var telegramTokenRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)

func checkWhsec(v string) error {
	rest, ok := strings.CutPrefix(v, "whsec_")
	if !ok {
		return errors.New("must be a Standard Webhooks secret: whsec_ followed by base64")
	}
	if b, err := base64.StdEncoding.DecodeString(rest); err != nil || len(b) < 16 {
		return errors.New("must be whsec_ followed by the base64 of 16 to 64 random bytes")
	} else if len(b) > 64 {
		return errors.New("must be whsec_ followed by the base64 of 16 to 64 random bytes")
	}
	return nil
}

func checkBase64(v string) error {
	if b, err := base64.StdEncoding.DecodeString(v); err != nil || len(b) == 0 {
		return errors.New("must be the base64 security token Microsoft Teams shows when the outgoing webhook is created")
	}
	return nil
}

func checkTelegramToken(v string) error {
	if !telegramTokenRe.MatchString(v) {
		return errors.New("must be 1 to 256 characters of A-Z, a-z, 0-9, _ and - (Telegram's rule for secret_token)")
	}
	return nil
}

// triggerFields lists each type's config keys.
var triggerFields = map[string][]triggerField{
	"webhook": {
		{name: "signing_secret", kind: "secret", check: checkWhsec},
		{name: "respond", kind: "enum", enum: []string{"async", "sync"}},
	},
	"slack": {
		{name: "signing_secret", kind: "secret", required: true},
		{name: "bot_credential_id", kind: "credential", required: true},
		{name: "bot_user_id", kind: "text"},
	},
	"telegram": {
		{name: "secret_token", kind: "secret", required: true, check: checkTelegramToken},
		{name: "bot_credential_id", kind: "credential", required: true},
	},
	"whatsapp": {
		{name: "verify_token", kind: "secret", required: true},
		{name: "app_secret", kind: "secret", required: true},
		{name: "phone_number_id", kind: "text", required: true},
		{name: "credential_id", kind: "credential", required: true},
	},
	"teams": {
		{name: "hmac_secret", kind: "secret", required: true, check: checkBase64},
	},
	"schedule": {
		{name: "cron", kind: "text", required: true},
		{name: "timezone", kind: "text"},
		{name: "catch_up", kind: "bool"},
	},
}

// triggerDefaults are the config values a type gets when they are left out.
var triggerDefaults = map[string]map[string]any{
	"webhook":  {"respond": "async"},
	"schedule": {"timezone": "UTC", "catch_up": false},
}

// buildTriggerConfig checks a type's config (the whole of it, after any merge) and splits
// it into the stored config and its secrets. prev holds the secrets stored so far: a secret
// sent back in the masked form a read shows keeps its value.
func (s *Server) buildTriggerConfig(ctx context.Context, ws, typ string, in map[string]any, prevMasked map[string]any, prev store.TriggerSecrets) (store.JSONObject, store.TriggerSecrets, error) {
	fields := triggerFields[typ]
	known := map[string]triggerField{}
	names := make([]string, 0, len(fields))
	for _, f := range fields {
		known[f.name] = f
		names = append(names, f.name)
	}
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := known[k]; !ok {
			return nil, nil, domain.Invalid("config."+k, "unknown field for a %s trigger; known fields: %s", typ, strings.Join(names, ", "))
		}
	}
	config, secrets := store.JSONObject{}, store.TriggerSecrets{}
	for k, v := range triggerDefaults[typ] {
		config[k] = v
	}
	for _, f := range fields {
		field := "config." + f.name
		v, ok := in[f.name]
		if !ok || v == nil {
			if f.required {
				return nil, nil, domain.Invalid(field, "is required for a %s trigger", typ)
			}
			continue
		}
		switch f.kind {
		case "bool":
			b, isBool := v.(bool)
			if !isBool {
				return nil, nil, domain.Invalid(field, "must be true or false")
			}
			config[f.name] = b
			continue
		}
		str, isStr := v.(string)
		if !isStr {
			return nil, nil, domain.Invalid(field, "must be a string")
		}
		if strings.TrimSpace(str) == "" {
			if f.required {
				return nil, nil, domain.Invalid(field, "is required for a %s trigger and must not be empty", typ)
			}
			continue
		}
		if len(str) > 1000 {
			return nil, nil, domain.Invalid(field, "must be at most 1000 bytes")
		}
		switch f.kind {
		case "secret":
			if old, kept := prev[f.name]; kept && prevMasked[f.name] == str {
				secrets[f.name] = old // sent back masked, as read: unchanged
				continue
			}
			if f.check != nil {
				if err := f.check(str); err != nil {
					return nil, nil, domain.Invalid(field, "%s", err.Error())
				}
			}
			secrets[f.name] = str
			continue
		case "enum":
			if err := domain.OneOf(field, str, f.enum); err != nil {
				return nil, nil, err
			}
		case "credential":
			if err := s.store.CheckRefs(ctx, ws, store.KindCredential, field, str); err != nil {
				return nil, nil, err
			}
		}
		if f.check != nil {
			if err := f.check(str); err != nil {
				return nil, nil, domain.Invalid(field, "%s", err.Error())
			}
		}
		config[f.name] = str
	}
	all := platform.Config{}
	for k, v := range config {
		all[k] = v
	}
	for k, v := range secrets {
		all[k] = v
	}
	if err := platform.ValidateConfig(typ, all); err != nil {
		return nil, nil, domain.Invalid("config", "%s", err.Error())
	}
	if typ == "schedule" {
		tz, _ := config["timezone"].(string)
		cronExpr, _ := config["cron"].(string)
		if _, err := triggers.ParseSchedule(cronExpr, tz); err != nil {
			var fe *triggers.FieldError
			if errors.As(err, &fe) {
				return nil, nil, domain.Invalid("config."+fe.Field, "%s", fe.Message)
			}
			return nil, nil, err
		}
	}
	return config, secrets, nil
}

// checkInputMapping validates an input_mapping: at most 50 fields, each a non-empty name
// and GJSON path.
func checkInputMapping(typ string, m map[string]string) error {
	if len(m) == 0 {
		return nil
	}
	if typ == "schedule" {
		return domain.Invalid("input_mapping", "does not apply to a schedule; its run input is the trigger's input")
	}
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

// checkTriggerVersion checks that versionID is a version of the agent.
func (s *Server) checkTriggerVersion(ctx context.Context, ws, agentID, versionID string) error {
	if _, err := s.store.AgentVersionGet(ctx, ws, agentID, versionID); err != nil {
		if store.IsNotFound(err) {
			return domain.Invalid("version_id", "agent %s has no version %s", agentID, versionID)
		}
		return err
	}
	return nil
}

// checkScheduleInput checks a schedule's fixed input against the input_schema of what the
// trigger runs (when it has a runnable version yet).
func (s *Server) checkScheduleInput(ctx context.Context, t *store.Trigger) error {
	_, _, cfg, err := triggers.Target(ctx, s.store, t)
	if err != nil {
		var ce *store.ConflictError
		if errors.As(err, &ce) {
			return nil // no version yet: checked when a tick runs
		}
		return err
	}
	input := map[string]any(t.Input)
	if input == nil {
		input = map[string]any{}
	}
	return triggers.ValidateInput(cfg, input)
}

// nextTick is a schedule's first tick after now, or nil when it is disabled.
func nextTick(t *store.Trigger, now time.Time) (*store.Time, error) {
	if t.Type != "schedule" || !t.Enabled {
		return nil, nil
	}
	cronExpr, _ := t.Config["cron"].(string)
	tz, _ := t.Config["timezone"].(string)
	sch, err := triggers.ParseSchedule(cronExpr, tz)
	if err != nil {
		return nil, err
	}
	n := sch.Next(now)
	if n.IsZero() {
		return nil, nil
	}
	return &store.Time{Time: n.Truncate(time.Millisecond)}, nil
}

const (
	hookTokenMarker = "aph_"
	hookTokenBody   = 40
	hookTokenPrefix = 11
)

// newHookToken returns a random hook token ("aph_" and 40 base62 characters).
func newHookToken() (string, error) {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	const limit = 256 - 256%len(alphabet)
	var sb strings.Builder
	sb.WriteString(hookTokenMarker)
	buf := make([]byte, 64)
	for n := 0; n < hookTokenBody; {
		if _, err := rand.Read(buf); err != nil {
			return "", err
		}
		for _, b := range buf {
			if int(b) >= limit {
				continue
			}
			sb.WriteByte(alphabet[int(b)%len(alphabet)])
			if n++; n == hookTokenBody {
				break
			}
		}
	}
	return sb.String(), nil
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
	f := store.TriggerFilter{AgentID: q.Get("agent_id"), Type: q.Get("type")}
	if f.Type != "" {
		if err := domain.OneOf("type", f.Type, store.TriggerTypes); err != nil {
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
	if err := domain.FirstErr(domain.NotBlank("agent_id", req.AgentID), domain.OneOf("type", req.Type, store.TriggerTypes), domain.NotBlank("name", req.Name), checkWebhookURL(req.WebhookURL), checkInputMapping(req.Type, req.InputMapping)); err != nil {
		return err
	}
	if req.Input != nil && req.Type != "schedule" {
		return domain.Invalid("input", "is only for schedules; map a %s event to the run's input with input_mapping", req.Type)
	}
	if req.WebhookSecret != "" && req.WebhookURL == "" {
		return domain.Invalid("webhook_secret", "needs webhook_url")
	}
	if req.WebhookSecret != "" {
		if err := webhook.CheckSecret(req.WebhookSecret); err != nil {
			return domain.Invalid("webhook_secret", "%s", err.Error())
		}
	}
	var generated string
	if req.WebhookURL != "" && req.WebhookSecret == "" {
		generated = webhook.NewSecret()
		req.WebhookSecret = generated
	}
	ctx, ws := r.Context(), s.workspace(r)
	if err := s.store.CheckRefs(ctx, ws, store.KindAgent, "agent_id", req.AgentID); err != nil {
		return err
	}
	t := &store.Trigger{ID: store.NewID(), WorkspaceID: ws, AgentID: req.AgentID, Type: req.Type, Name: strings.TrimSpace(req.Name), Enabled: true,
		InputMapping: req.InputMapping, WebhookURL: req.WebhookURL}
	if req.Enabled != nil {
		t.Enabled = *req.Enabled
	}
	if req.VersionID != "" {
		if err := s.checkTriggerVersion(ctx, ws, req.AgentID, req.VersionID); err != nil {
			return err
		}
		t.VersionID = &req.VersionID
	}
	config, secrets, err := s.buildTriggerConfig(ctx, ws, req.Type, req.Config, nil, nil)
	if err != nil {
		return err
	}
	t.Config = config
	if req.WebhookSecret != "" {
		secrets["webhook_secret"] = req.WebhookSecret
	}
	if req.Type == "schedule" {
		t.Input = store.JSONObject(req.Input)
		if t.Input == nil {
			t.Input = store.JSONObject{}
		}
		if err := s.checkScheduleInput(ctx, t); err != nil {
			return err
		}
		if t.NextRunAt, err = nextTick(t, time.Now()); err != nil {
			return err
		}
	}
	var token string
	var hash string
	if req.Type != "schedule" {
		if token, err = newHookToken(); err != nil {
			return err
		}
		hash, t.TokenPrefix = auth.HashKey(token), token[:hookTokenPrefix]
	}
	created, err := s.store.TriggerCreate(ctx, t, hash, secrets, s.cfg.Secrets)
	if err != nil {
		return err
	}
	out := TriggerWithToken{Trigger: *created}
	if generated != "" {
		out.WebhookSecret = generated // shown this once; reads show it masked
	}
	if token != "" {
		out.Token, out.HookURL = token, s.hookURL(r, token)
	}
	writeData(w, http.StatusCreated, out)
	return nil
}

func (s *Server) updateTrigger(w http.ResponseWriter, r *http.Request) error {
	var req triggerUpdateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	ctx, ws, id := r.Context(), s.workspace(r), pathID(r, "id")
	cur, err := s.store.TriggerGet(ctx, ws, id)
	if err != nil {
		return err
	}
	var p store.TriggerPatch
	if p.Name, err = patchName(req.Name); err != nil {
		return err
	}
	next := *cur
	if req.Enabled != nil {
		p.Enabled, next.Enabled = req.Enabled, *req.Enabled
	}
	if raw := strings.TrimSpace(string(req.VersionID)); raw != "" {
		var v *string
		if raw != "null" {
			var sv string
			if err := json.Unmarshal(req.VersionID, &sv); err != nil {
				return badRequest("version_id: expected string or null")
			}
			if sv != "" {
				if err := s.checkTriggerVersion(ctx, ws, cur.AgentID, sv); err != nil {
					return err
				}
				v = &sv
			}
		}
		p.VersionID, next.VersionID = &v, v
	}
	if req.InputMapping != nil {
		if err := checkInputMapping(cur.Type, *req.InputMapping); err != nil {
			return err
		}
		p.InputMapping = req.InputMapping
	}
	if req.Input != nil {
		if cur.Type != "schedule" {
			return domain.Invalid("input", "is only for schedules; map a %s event to the run's input with input_mapping", cur.Type)
		}
		in := store.JSONObject(*req.Input)
		if in == nil {
			in = store.JSONObject{}
		}
		p.Input, next.Input = &in, in
	}
	if req.WebhookURL != nil {
		if err := checkWebhookURL(*req.WebhookURL); err != nil {
			return err
		}
		p.WebhookURL, next.WebhookURL = req.WebhookURL, *req.WebhookURL
	}
	if req.WebhookSecret != nil && *req.WebhookSecret != "" {
		if err := webhook.CheckSecret(*req.WebhookSecret); err != nil {
			return domain.Invalid("webhook_secret", "%s", err.Error())
		}
	}
	// A webhook added without a secret gets one, shown in this answer only (as on create).
	var generated string
	if next.WebhookURL != "" && cur.WebhookURL == "" && (req.WebhookSecret == nil || *req.WebhookSecret == "") {
		generated = webhook.NewSecret()
		req.WebhookSecret = &generated
	}
	if req.Config != nil || req.WebhookSecret != nil {
		prev, err := s.store.TriggerSecretsGet(ctx, ws, id, s.cfg.Secrets)
		if err != nil {
			return err
		}
		merged := map[string]any{}
		for k, v := range cur.Config {
			merged[k] = v
		}
		for k, v := range req.Config {
			if v == nil {
				delete(merged, k)
			} else {
				merged[k] = v
			}
		}
		// Secrets left as they are appear in cur.Config masked: they keep their values.
		config, secrets, err := s.buildTriggerConfig(ctx, ws, cur.Type, merged, cur.Config, prev)
		if err != nil {
			return err
		}
		if old, ok := prev["webhook_secret"]; ok {
			secrets["webhook_secret"] = old
		}
		if req.WebhookSecret != nil {
			if *req.WebhookSecret == "" {
				delete(secrets, "webhook_secret")
			} else {
				secrets["webhook_secret"] = *req.WebhookSecret
			}
		}
		p.Config, p.Secrets, next.Config = &config, &secrets, config
	}
	if next.WebhookURL == "" && req.WebhookSecret != nil && *req.WebhookSecret != "" {
		return domain.Invalid("webhook_secret", "needs webhook_url")
	}
	if cur.Type == "schedule" {
		if req.Input != nil || p.VersionID != nil {
			if err := s.checkScheduleInput(ctx, &next); err != nil {
				return err
			}
		}
		if req.Enabled != nil || req.Config != nil {
			n, err := nextTick(&next, time.Now())
			if err != nil {
				return err
			}
			p.NextRunAt = &n
		}
	}
	t, err := s.store.TriggerUpdate(ctx, ws, id, p, s.cfg.Secrets)
	if err != nil {
		return err
	}
	if generated != "" {
		t.WebhookSecret = generated // shown this once; reads show it masked
	}
	writeData(w, http.StatusOK, t)
	return nil
}

func (s *Server) rotateTrigger(w http.ResponseWriter, r *http.Request) error {
	ctx, ws, id := r.Context(), s.workspace(r), pathID(r, "id")
	cur, err := s.store.TriggerGet(ctx, ws, id)
	if err != nil {
		return err
	}
	if cur.Type == "schedule" {
		return conflict("trigger %s is a schedule: it has no hook token to rotate", id)
	}
	token, err := newHookToken()
	if err != nil {
		return err
	}
	t, err := s.store.TriggerRotate(ctx, ws, id, auth.HashKey(token), token[:hookTokenPrefix])
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, TriggerWithToken{Trigger: *t, Token: token, HookURL: s.hookURL(r, token)})
	return nil
}
