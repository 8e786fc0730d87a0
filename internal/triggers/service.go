package triggers

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/vault"
	"github.com/agentplane/agentplane/internal/webhook"
)

// Service holds the rules of creating and changing triggers: config checked against the type's
// declaration, secrets sealed and kept when sent back masked, completion webhook secrets
// generated, hook tokens issued and schedules' next ticks computed. The API only translates
// HTTP to and from it. Its errors are *store.ValidationError (422), *store.ReferenceError,
// *store.NotFoundError and *store.ConflictError, or others from the store.
type Service struct {
	Store   *store.Store
	Secrets *secretbox.Box
	// Now is the clock schedules tick from; nil is time.Now.
	Now func() time.Time
}

// CreateInput is a new trigger as a client asks for it; Create checks it with its Validate.
type CreateInput = domain.TriggerCreateRequest

// Created is a created (or rotated) trigger with what is shown only this once: its hook token
// ("" for schedules) and, in Trigger.WebhookSecret, a generated completion webhook secret.
type Created struct {
	Trigger *domain.Trigger
	Token   string
}

// Patch is a change to a trigger; a nil field stays as it is.
type Patch struct {
	Name    *string
	Enabled *bool
	// VersionID, when set, points at the version to run; a nil *string runs the active one.
	VersionID **string
	// Config is merged into the config key by key; a nil value removes its key.
	Config        map[string]any
	InputMapping  *map[string]string
	Input         *map[string]any
	WebhookURL    *string
	WebhookSecret *string // "" removes the completion webhook secret
}

// webhookSecretKey is the TriggerSecrets key of the completion webhook's secret.
const webhookSecretKey = "webhook_secret"

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Create checks and stores a new trigger of the workspace.
func (s *Service) Create(ctx context.Context, ws string, in CreateInput) (*Created, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	generated := ""
	if in.WebhookURL != "" && in.WebhookSecret == "" {
		generated = webhook.NewSecret()
		in.WebhookSecret = generated
	}

	// The agent and the version it runs.
	if err := s.Store.CheckRefs(ctx, ws, domain.KindAgent, "agent_id", in.AgentID); err != nil {
		return nil, err
	}
	t := &domain.Trigger{ID: store.NewID(), WorkspaceID: ws, AgentID: in.AgentID, Type: in.Type, Name: strings.TrimSpace(in.Name),
		Enabled: in.Enabled == nil || *in.Enabled, InputMapping: in.InputMapping, WebhookURL: in.WebhookURL}
	if in.VersionID != "" {
		if err := s.checkVersion(ctx, ws, in.AgentID, in.VersionID); err != nil {
			return nil, err
		}
		t.VersionID = &in.VersionID
	}

	// The config, split into what is shown and what is sealed.
	config, secrets, err := s.buildConfig(ctx, ws, in.Type, in.Config, nil, nil)
	if err != nil {
		return nil, err
	}
	t.Config = config
	if in.WebhookSecret != "" {
		secrets[webhookSecretKey] = in.WebhookSecret
	}

	// A schedule's input and first tick, or a hook's token.
	var token, hash string
	if in.Type == TypeSchedule {
		t.Input = domain.JSONObject(in.Input)
		if t.Input == nil {
			t.Input = domain.JSONObject{}
		}
		if err := s.checkScheduleInput(ctx, t); err != nil {
			return nil, err
		}
		if t.NextRunAt, err = nextTick(t, s.now()); err != nil {
			return nil, err
		}
	} else {
		if token, err = NewHookToken(); err != nil {
			return nil, err
		}
		hash, t.TokenPrefix = auth.HashKey(token), token[:HookTokenPrefixLen]
	}

	created, err := vault.TriggerCreate(ctx, s.Store, t, hash, secrets, s.Secrets)
	if err != nil {
		return nil, err
	}
	if generated != "" {
		created.WebhookSecret = generated // shown this once; reads show it masked
	}
	return &Created{Trigger: created, Token: token}, nil
}

// Update applies a patch to a trigger of the workspace. The config is merged, then checked
// again as a whole; a schedule whose cron, time zone or enabled flag may have changed gets a
// new next tick. A completion webhook added without a secret gets one, in the answer's
// WebhookSecret only.
func (s *Service) Update(ctx context.Context, ws, id string, p Patch) (*domain.Trigger, error) {
	cur, err := s.Store.TriggerGet(ctx, ws, id)
	if err != nil {
		return nil, err
	}
	sp, next, err := s.patchPlain(ctx, ws, cur, p)
	if err != nil {
		return nil, err
	}

	generated := completionPatch(cur, next, &p)
	if p.Config != nil || p.WebhookSecret != nil {
		config, secrets, err := s.patchConfig(ctx, ws, cur, p)
		if err != nil {
			return nil, err
		}
		sp.Config, sp.Secrets, next.Config = &config, &secrets, config
	}
	if next.WebhookURL == "" && p.WebhookSecret != nil && *p.WebhookSecret != "" {
		return nil, domain.Invalid("webhook_secret", "needs a webhook_url")
	}

	if err := s.patchSchedule(ctx, cur, next, p, &sp); err != nil {
		return nil, err
	}
	t, err := vault.TriggerUpdate(ctx, s.Store, ws, id, sp, s.Secrets)
	if err != nil {
		return nil, err
	}
	if generated != "" {
		t.WebhookSecret = generated // shown this once; reads show it masked
	}
	return t, nil
}

// patchPlain checks the fields of p that need no secrets and returns the store patch of them
// with the trigger as it will be.
func (s *Service) patchPlain(ctx context.Context, ws string, cur *domain.Trigger, p Patch) (domain.TriggerPatch, *domain.Trigger, error) {
	sp := domain.TriggerPatch{Name: p.Name}
	next := *cur
	if p.Enabled != nil {
		sp.Enabled, next.Enabled = p.Enabled, *p.Enabled
	}
	if p.VersionID != nil {
		if v := *p.VersionID; v != nil {
			if err := s.checkVersion(ctx, ws, cur.AgentID, *v); err != nil {
				return sp, nil, err
			}
		}
		sp.VersionID, next.VersionID = p.VersionID, *p.VersionID
	}
	if p.InputMapping != nil {
		if err := domain.CheckTriggerRunInput(cur.Type, *p.InputMapping, false); err != nil {
			return sp, nil, err
		}
		sp.InputMapping = p.InputMapping
	}
	if p.Input != nil {
		if err := domain.CheckTriggerRunInput(cur.Type, nil, true); err != nil {
			return sp, nil, err
		}
		in := domain.JSONObject(*p.Input)
		if in == nil {
			in = domain.JSONObject{}
		}
		sp.Input, next.Input = &in, in
	}
	if p.WebhookURL != nil {
		sp.WebhookURL, next.WebhookURL = p.WebhookURL, *p.WebhookURL
	}
	return sp, &next, nil
}

// completionPatch gives a completion webhook added without a secret one, set in p and
// returned, to be shown in this answer only (as on create). The secret a patch sets is checked
// by domain.TriggerUpdateRequest.Validate.
func completionPatch(cur, next *domain.Trigger, p *Patch) (generated string) {
	if p.WebhookSecret != nil && *p.WebhookSecret != "" {
		return ""
	}
	if next.WebhookURL != "" && cur.WebhookURL == "" {
		generated = webhook.NewSecret()
		p.WebhookSecret = &generated
	}
	return generated
}

// patchConfig merges p's config into the trigger's and checks the result as a whole. Secrets
// left as they are appear in cur.Config masked: they keep their values, and so does the
// completion webhook secret unless p replaces or removes it.
func (s *Service) patchConfig(ctx context.Context, ws string, cur *domain.Trigger, p Patch) (domain.JSONObject, domain.TriggerSecrets, error) {
	prev, err := vault.TriggerSecretsGet(ctx, s.Store, ws, cur.ID, s.Secrets)
	if err != nil {
		return nil, nil, err
	}
	merged := map[string]any{}
	for k, v := range cur.Config {
		merged[k] = v
	}
	for k, v := range p.Config {
		if v == nil {
			delete(merged, k)
		} else {
			merged[k] = v
		}
	}
	config, secrets, err := s.buildConfig(ctx, ws, cur.Type, merged, cur.Config, prev)
	if err != nil {
		return nil, nil, err
	}

	if old, ok := prev[webhookSecretKey]; ok {
		secrets[webhookSecretKey] = old
	}
	if p.WebhookSecret != nil {
		if *p.WebhookSecret == "" {
			delete(secrets, webhookSecretKey)
		} else {
			secrets[webhookSecretKey] = *p.WebhookSecret
		}
	}
	return config, secrets, nil
}

// patchSchedule checks a schedule's input against what it now runs and computes its next
// tick when its config or enabled flag was sent.
func (s *Service) patchSchedule(ctx context.Context, cur, next *domain.Trigger, p Patch, sp *domain.TriggerPatch) error {
	if cur.Type != TypeSchedule {
		return nil
	}
	if p.Input != nil || p.VersionID != nil {
		if err := s.checkScheduleInput(ctx, next); err != nil {
			return err
		}
	}
	if p.Enabled != nil || p.Config != nil {
		n, err := nextTick(next, s.now())
		if err != nil {
			return err
		}
		sp.NextRunAt = &n
	}
	return nil
}

// Rotate issues a new hook token for a trigger; the old one stops working at once. A
// schedule has none: *store.ConflictError.
func (s *Service) Rotate(ctx context.Context, ws, id string) (*Created, error) {
	cur, err := s.Store.TriggerGet(ctx, ws, id)
	if err != nil {
		return nil, err
	}
	if cur.Type == TypeSchedule {
		return nil, &store.ConflictError{Message: fmt.Sprintf("trigger %s is a schedule: it has no hook token to rotate", id)}
	}
	token, err := NewHookToken()
	if err != nil {
		return nil, err
	}
	t, err := s.Store.TriggerRotate(ctx, ws, id, auth.HashKey(token), token[:HookTokenPrefixLen])
	if err != nil {
		return nil, err
	}
	return &Created{Trigger: t, Token: token}, nil
}

// checkRunInput applies the rules of where a run's input comes from: a schedule has a fixed
// input and no mapping, every other type maps its events and has no fixed input.
// checkVersion checks that versionID is a version of the agent.
func (s *Service) checkVersion(ctx context.Context, ws, agentID, versionID string) error {
	if _, err := s.Store.AgentVersionGet(ctx, ws, agentID, versionID); err != nil {
		if store.IsNotFound(err) {
			return domain.Invalid("version_id", "agent %s has no version %s", agentID, versionID)
		}
		return err
	}
	return nil
}

// checkScheduleInput checks a schedule's fixed input against the input_schema of what the
// trigger runs (when it has a runnable version yet).
func (s *Service) checkScheduleInput(ctx context.Context, t *domain.Trigger) error {
	_, _, cfg, err := Target(ctx, s.Store, t)
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
	return cfg.CheckInput(input)
}

// nextTick is a schedule's first tick after now, or nil when it is disabled.
func nextTick(t *domain.Trigger, now time.Time) (*domain.Time, error) {
	if t.Type != TypeSchedule || !t.Enabled {
		return nil, nil
	}
	cronExpr, _ := t.Config["cron"].(string)
	tz, _ := t.Config["timezone"].(string)
	sch, err := ParseSchedule(cronExpr, tz)
	if err != nil {
		return nil, err
	}
	n := sch.Next(now)
	if n.IsZero() {
		return nil, nil
	}
	return &domain.Time{Time: n.Truncate(time.Millisecond)}, nil
}

// Hook tokens are "aph_" and 40 base62 characters; the first HookTokenPrefixLen characters
// are kept in clear to tell tokens apart.
const (
	hookTokenMarker    = "aph_"
	hookTokenBody      = 40
	HookTokenPrefixLen = 11
)

// IsHookToken reports whether s has the shape of a hook token, so a malformed one is refused
// before any lookup.
func IsHookToken(s string) bool {
	return strings.HasPrefix(s, hookTokenMarker) && len(s) == len(hookTokenMarker)+hookTokenBody
}

// NewHookToken returns a random hook token.
func NewHookToken() (string, error) {
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
