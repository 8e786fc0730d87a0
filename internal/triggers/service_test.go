package triggers

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/triggers/platform"
	"github.com/agentplane/agentplane/internal/vault"
)

const (
	testWhsec   = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	otherWhsec  = "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0"
	slackSecret = "8f742231b10e8888abcd99yyyzzz85a5"
)

// serviceEnv is a Service on a fresh SQLite store with one agent and one credential.
type serviceEnv struct {
	svc     *Service
	clock   *clock
	agentID string
	credID  string
}

func newServiceEnv(t *testing.T) *serviceEnv {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dbs.SQLiteFile(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a := setup(t, st, "")
	box := secretbox.NewRandom()
	c, err := vault.CredentialCreate(ctx, st, &domain.Credential{WorkspaceID: testWS, Name: "bot", Type: "bearer_token"}, "xoxb-1", box)
	if err != nil {
		t.Fatal(err)
	}
	clk := newClock(at("2026-07-03T14:00:00Z"))
	return &serviceEnv{svc: &Service{Store: st, Secrets: box, Now: clk.now}, clock: clk, agentID: a.ID, credID: c.ID}
}

// fieldOf returns the field a *store.ValidationError names, or fails.
func fieldOf(t *testing.T, err error) string {
	t.Helper()
	var ve *store.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v (%T), want a *store.ValidationError", err, err)
	}
	return ve.Field
}

func (e *serviceEnv) create(t *testing.T, in CreateInput) *Created {
	t.Helper()
	if in.AgentID == "" {
		in.AgentID = e.agentID
	}
	if in.Name == "" {
		in.Name = "t"
	}
	c, err := e.svc.Create(context.Background(), testWS, in)
	if err != nil {
		t.Fatalf("create %s: %v", in.Type, err)
	}
	return c
}

func (e *serviceEnv) secrets(t *testing.T, id string) domain.TriggerSecrets {
	t.Helper()
	s, err := vault.TriggerSecretsGet(context.Background(), e.svc.Store, testWS, id, e.svc.Secrets)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestServiceCreate(t *testing.T) {
	t.Parallel()
	e := newServiceEnv(t)
	ctx := context.Background()

	t.Run("a webhook gets its defaults, a token and a generated completion secret", func(t *testing.T) {
		c := e.create(t, CreateInput{Type: "webhook", Config: map[string]any{"signing_secret": testWhsec}, WebhookURL: "https://example.com/done"})
		if !IsHookToken(c.Token) || c.Trigger.TokenPrefix != c.Token[:HookTokenPrefixLen] {
			t.Errorf("token %q, prefix %q", c.Token, c.Trigger.TokenPrefix)
		}
		if c.Trigger.Config["respond"] != "async" {
			t.Errorf("respond = %v, want the default async", c.Trigger.Config["respond"])
		}
		if c.Trigger.Config["signing_secret"] == testWhsec {
			t.Error("the signing secret is shown in clear")
		}
		if !strings.HasPrefix(c.Trigger.WebhookSecret, "whsec_") {
			t.Errorf("generated completion secret %q", c.Trigger.WebhookSecret)
		}
		s := e.secrets(t, c.Trigger.ID)
		if s["signing_secret"] != testWhsec || s[webhookSecretKey] != c.Trigger.WebhookSecret {
			t.Errorf("sealed secrets %v", s)
		}
	})

	t.Run("a schedule gets its first tick and no token", func(t *testing.T) {
		c := e.create(t, CreateInput{Type: TypeSchedule, Config: map[string]any{"cron": "0 9 * * 1-5", "timezone": "America/New_York"}})
		if c.Token != "" || c.Trigger.TokenPrefix != "" {
			t.Errorf("a schedule got token %q", c.Token)
		}
		if c.Trigger.NextRunAt == nil || !c.Trigger.NextRunAt.Equal(at("2026-07-06T13:00:00Z")) {
			t.Errorf("next_run_at %v, want Monday 09:00 in New York", c.Trigger.NextRunAt)
		}
		if c.Trigger.Config["catch_up"] != false {
			t.Errorf("catch_up = %v, want the default false", c.Trigger.Config["catch_up"])
		}
	})

	bad := []struct {
		name  string
		in    CreateInput
		field string
	}{
		{"an unknown config key", CreateInput{Type: "slack", Config: map[string]any{"signing_secret": slackSecret, "bot_credential_id": e.credID, "colour": "red"}}, "config.colour"},
		{"a required key left out", CreateInput{Type: "slack", Config: map[string]any{"signing_secret": slackSecret}}, "config.bot_credential_id"},
		{"a required key left empty", CreateInput{Type: "teams", Config: map[string]any{"hmac_secret": " "}}, "config.hmac_secret"},
		{"a value the field's check refuses", CreateInput{Type: "telegram", Config: map[string]any{"secret_token": "has space", "bot_credential_id": e.credID}}, "config.secret_token"},
		{"a value out of the enum", CreateInput{Type: "webhook", Config: map[string]any{"respond": "later"}}, "config.respond"},
		{"a bool that is not one", CreateInput{Type: TypeSchedule, Config: map[string]any{"cron": "* * * * *", "catch_up": "yes"}}, "config.catch_up"},
		{"a string that is not one", CreateInput{Type: "webhook", Config: map[string]any{"respond": 1}}, "config.respond"},
		{"an over-long value", CreateInput{Type: "slack", Config: map[string]any{"signing_secret": strings.Repeat("s", 1001), "bot_credential_id": e.credID}}, "config.signing_secret"},
		{"a cron the type's rule refuses", CreateInput{Type: TypeSchedule, Config: map[string]any{"cron": "every day"}}, "config.cron"},
		{"a time zone the type's rule refuses", CreateInput{Type: TypeSchedule, Config: map[string]any{"cron": "* * * * *", "timezone": "Mars/Olympus"}}, "config.timezone"},
		{"a mapping for a schedule", CreateInput{Type: TypeSchedule, Config: map[string]any{"cron": "* * * * *"}, InputMapping: map[string]string{"a": "b"}}, "input_mapping"},
		{"an input for a hook", CreateInput{Type: "webhook", Input: map[string]any{"a": 1}}, "input"},
		{"a completion secret without a URL", CreateInput{Type: "webhook", WebhookSecret: testWhsec}, "webhook_secret"},
		{"a malformed completion secret", CreateInput{Type: "webhook", WebhookURL: "https://example.com", WebhookSecret: "nope"}, "webhook_secret"},
		{"a version of no such agent", CreateInput{Type: "webhook", VersionID: "nope"}, "version_id"},
	}
	for _, c := range bad {
		t.Run("refuses "+c.name, func(t *testing.T) {
			c.in.AgentID, c.in.Name = e.agentID, "t"
			_, err := e.svc.Create(ctx, testWS, c.in)
			if got := fieldOf(t, err); got != c.field {
				t.Errorf("field %q (%v), want %q", got, err, c.field)
			}
		})
	}

	t.Run("refuses a credential of no such id", func(t *testing.T) {
		_, err := e.svc.Create(ctx, testWS, CreateInput{AgentID: e.agentID, Name: "t", Type: "slack",
			Config: map[string]any{"signing_secret": slackSecret, "bot_credential_id": "nope"}})
		var re *store.ReferenceError
		if !errors.As(err, &re) || re.Field != "config.bot_credential_id" {
			t.Errorf("error %v, want a reference error on config.bot_credential_id", err)
		}
	})
}

func TestServiceUpdate(t *testing.T) {
	t.Parallel()
	e := newServiceEnv(t)
	ctx := context.Background()
	slack := e.create(t, CreateInput{Type: "slack", Config: map[string]any{"signing_secret": slackSecret, "bot_credential_id": e.credID, "bot_user_id": "U1"},
		WebhookURL: "https://example.com/done"})
	completion := slack.Trigger.WebhookSecret

	t.Run("a secret sent back masked keeps its value and null removes a key", func(t *testing.T) {
		cur, _ := e.svc.Store.TriggerGet(ctx, testWS, slack.Trigger.ID)
		got, err := e.svc.Update(ctx, testWS, cur.ID, Patch{Config: map[string]any{"signing_secret": cur.Config["signing_secret"], "bot_user_id": nil}})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := got.Config["bot_user_id"]; ok {
			t.Error("bot_user_id set to null was kept")
		}
		s := e.secrets(t, cur.ID)
		if s["signing_secret"] != slackSecret || s[webhookSecretKey] != completion {
			t.Errorf("secrets after the merge: %v", s)
		}
	})

	t.Run("a new secret replaces the old", func(t *testing.T) {
		if _, err := e.svc.Update(ctx, testWS, slack.Trigger.ID, Patch{Config: map[string]any{"signing_secret": "new-secret"}}); err != nil {
			t.Fatal(err)
		}
		if s := e.secrets(t, slack.Trigger.ID); s["signing_secret"] != "new-secret" {
			t.Errorf("signing_secret %q", s["signing_secret"])
		}
	})

	t.Run("the merged config is checked as a whole", func(t *testing.T) {
		_, err := e.svc.Update(ctx, testWS, slack.Trigger.ID, Patch{Config: map[string]any{"bot_credential_id": nil}})
		if got := fieldOf(t, err); got != "config.bot_credential_id" {
			t.Errorf("field %q, want config.bot_credential_id", got)
		}
	})

	t.Run("removing the completion secret keeps the config's", func(t *testing.T) {
		if _, err := e.svc.Update(ctx, testWS, slack.Trigger.ID, Patch{WebhookSecret: ptr("")}); err != nil {
			t.Fatal(err)
		}
		s := e.secrets(t, slack.Trigger.ID)
		if _, ok := s[webhookSecretKey]; ok || s["signing_secret"] != "new-secret" {
			t.Errorf("secrets %v", s)
		}
	})

	t.Run("a completion webhook added without a secret gets one, shown once", func(t *testing.T) {
		hook := e.create(t, CreateInput{Type: "webhook"})
		got, err := e.svc.Update(ctx, testWS, hook.Trigger.ID, Patch{WebhookURL: ptr("https://example.com/done")})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(got.WebhookSecret, "whsec_") || e.secrets(t, hook.Trigger.ID)[webhookSecretKey] != got.WebhookSecret {
			t.Errorf("generated secret %q", got.WebhookSecret)
		}
	})

	t.Run("a completion secret needs a URL", func(t *testing.T) {
		hook := e.create(t, CreateInput{Type: "webhook"})
		_, err := e.svc.Update(ctx, testWS, hook.Trigger.ID, Patch{WebhookSecret: ptr(otherWhsec)})
		if got := fieldOf(t, err); got != "webhook_secret" {
			t.Errorf("field %q, want webhook_secret", got)
		}
	})

	t.Run("a schedule's tick follows its cron and enabled flag", func(t *testing.T) {
		s := e.create(t, CreateInput{Type: TypeSchedule, Config: map[string]any{"cron": "0 9 * * *"}})
		got, err := e.svc.Update(ctx, testWS, s.Trigger.ID, Patch{Config: map[string]any{"cron": "30 15 * * *"}})
		if err != nil {
			t.Fatal(err)
		}
		if got.NextRunAt == nil || !got.NextRunAt.Equal(at("2026-07-03T15:30:00Z")) {
			t.Errorf("next_run_at %v after the cron changed", got.NextRunAt)
		}
		if got, err = e.svc.Update(ctx, testWS, s.Trigger.ID, Patch{Enabled: ptr(false)}); err != nil || got.NextRunAt != nil {
			t.Errorf("disabled: next_run_at %v, %v", got.NextRunAt, err)
		}
	})

	t.Run("an input is only for schedules", func(t *testing.T) {
		_, err := e.svc.Update(ctx, testWS, slack.Trigger.ID, Patch{Input: &map[string]any{"a": 1}})
		if got := fieldOf(t, err); got != "input" {
			t.Errorf("field %q, want input", got)
		}
	})

	t.Run("an unknown trigger is not found", func(t *testing.T) {
		if _, err := e.svc.Update(ctx, testWS, "nope", Patch{}); !store.IsNotFound(err) {
			t.Errorf("error %v, want not found", err)
		}
	})
}

func TestServiceRotate(t *testing.T) {
	t.Parallel()
	e := newServiceEnv(t)
	ctx := context.Background()

	t.Run("a hook gets a new token", func(t *testing.T) {
		c := e.create(t, CreateInput{Type: "webhook"})
		r, err := e.svc.Rotate(ctx, testWS, c.Trigger.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !IsHookToken(r.Token) || r.Token == c.Token || r.Trigger.TokenPrefix != r.Token[:HookTokenPrefixLen] {
			t.Errorf("rotated token %q (was %q), prefix %q", r.Token, c.Token, r.Trigger.TokenPrefix)
		}
	})

	t.Run("a schedule has no token to rotate", func(t *testing.T) {
		c := e.create(t, CreateInput{Type: TypeSchedule, Config: map[string]any{"cron": "* * * * *"}})
		var ce *store.ConflictError
		if _, err := e.svc.Rotate(ctx, testWS, c.Trigger.ID); !errors.As(err, &ce) {
			t.Errorf("error %v, want a conflict", err)
		}
	})
}

// TestServiceRegisteredType follows docs/EXTENDING.md once: a trigger type registered in one
// place (here, a test) is accepted, checked and sealed like the built-in ones.
func TestServiceRegisteredType(t *testing.T) {
	platform.Register(platform.Spec{
		Type: "test_pager",
		Doc:  "test_pager: api_key, channel (default #ops).",
		Fields: []platform.Field{
			{Name: "api_key", Kind: platform.KindSecret, Required: true},
			{Name: "channel", Kind: platform.KindText, Default: "#ops", Check: func(v string) error {
				if !strings.HasPrefix(v, "#") {
					return errors.New("must start with #")
				}
				return nil
			}},
		},
	})
	t.Cleanup(func() { platform.Unregister("test_pager") })
	e := newServiceEnv(t)

	t.Run("its fields are read, defaulted and sealed", func(t *testing.T) {
		c := e.create(t, CreateInput{Type: "test_pager", Config: map[string]any{"api_key": "k-123"}})
		if c.Trigger.Config["channel"] != "#ops" || c.Trigger.Config["api_key"] == "k-123" {
			t.Errorf("config %v", c.Trigger.Config)
		}
		if e.secrets(t, c.Trigger.ID)["api_key"] != "k-123" {
			t.Error("api_key was not sealed")
		}
	})

	t.Run("its checks apply", func(t *testing.T) {
		_, err := e.svc.Create(context.Background(), testWS, CreateInput{AgentID: e.agentID, Name: "t", Type: "test_pager",
			Config: map[string]any{"api_key": "k", "channel": "ops"}})
		if got := fieldOf(t, err); got != "config.channel" {
			t.Errorf("field %q, want config.channel", got)
		}
	})
}

func ptr[T any](v T) *T { return &v }
