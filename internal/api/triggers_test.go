package api

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/llm/simulated"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/triggers"
	"github.com/agentplane/agentplane/internal/webhook"
)

// Secrets the trigger tests configure; none of them may ever be in a response after
// creation, in the database file or in the log.
const (
	testSlackSecret    = "8f742231b10e8888abcd99yyyzzz85a5"
	testWhsec          = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	testTelegramSecret = "tg_secret-token_123456"
	testWAVerify       = "wa-verify-token-4711"
	testWAAppSecret    = "wa-app-secret-0815abcdef"
	testTeamsSecret    = "dGVhbXMtc2hhcmVkLXNlY3JldC1mb3ItdGVzdHMh" // base64
	testBotToken       = "xoxb-test-bot-token-1234567890"
)

// recordingRouter answers with the simulated model and records the messages of every call.
type recordingRouter struct {
	runtime.SimulatedRouter
	mu    sync.Mutex
	calls [][]llm.Message
}

func (r *recordingRouter) Route(ctx context.Context, ws string, cfg *domain.AgentConfig, m *domain.LLMModel) (*runtime.Route, error) {
	rt, err := r.SimulatedRouter.Route(ctx, ws, cfg, m)
	if err != nil {
		return nil, err
	}
	return &runtime.Route{Provider: recordingProvider{p: rt.Provider, r: r}, Name: rt.Name}, nil
}

func (r *recordingRouter) snapshot() [][]llm.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]llm.Message(nil), r.calls...)
}

type recordingProvider struct {
	p llm.Provider
	r *recordingRouter
}

func (p recordingProvider) Complete(ctx context.Context, req llm.Request, emit func(llm.Event) error) (*llm.Response, error) {
	p.r.mu.Lock()
	p.r.calls = append(p.r.calls, append([]llm.Message(nil), req.Messages...))
	p.r.mu.Unlock()
	return p.p.Complete(ctx, req, emit)
}

// triggerEnv is a server (or emulator) with an agent to trigger, chat platform replies on,
// and a router recording every model call.
type triggerEnv struct {
	*testEnv
	agent   string
	rec     *recordingRouter
	replier *triggers.Replier // nil in the emulator
	// skew moves the replier's clock ahead (ns), to reach a retry's time without waiting.
	skew *atomic.Int64
}

func newTriggerEnv(t *testing.T, st *store.Store, emulator bool) *triggerEnv {
	t.Helper()
	rec := &recordingRouter{SimulatedRouter: runtime.SimulatedRouter{Model: simulated.New()}}
	skew := new(atomic.Int64)
	var replier *triggers.Replier
	e := newTestEnv(t, onStore(st), emulatorIf(emulator), withConfig(func(c *Config) {
		if !emulator {
			replier = &triggers.Replier{Store: st, Secrets: c.Secrets, Client: &http.Client{Timeout: 10 * time.Second}, Logger: c.Logger,
				Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }}
			c.Replier = replier
		}
	}), withRouter(func(*store.Store, *secretbox.Box) runtime.ModelRouter { return rec }))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		e.srv.WaitReplies(ctx)
	})
	a, err := e.c.AgentCreate(context.Background(), client.AgentCreateRequest{Name: "Bot", Type: "simple",
		Config: client.AgentConfig{Model: "gpt-4o-mini", SystemPrompt: "You are a helpful bot."}})
	if err != nil {
		t.Fatal(err)
	}
	return &triggerEnv{testEnv: e, agent: a.ID, rec: rec, replier: replier, skew: skew}
}

// activeVersion is the id of the agent's active version.
func (e *triggerEnv) activeVersion(t *testing.T) string {
	t.Helper()
	a, err := e.c.AgentGet(context.Background(), e.agent)
	if err != nil || a.ActiveVersionID == nil {
		t.Fatalf("agent: %v", err)
	}
	return *a.ActiveVersionID
}

// createTrigger creates a trigger and returns its id, token and hook URL.
func (e *triggerEnv) createTrigger(t *testing.T, body string) (id, token, hookURL string) {
	t.Helper()
	a := e.post(t, "/api/v1/agent-triggers", "", body)
	if a.status != http.StatusCreated {
		t.Fatalf("create trigger: %d %v", a.status, a.body)
	}
	d := a.body["data"].(map[string]any)
	token, _ = d["token"].(string)
	hookURL, _ = d["hook_url"].(string)
	return d["id"].(string), token, hookURL
}

// credential stores a bot credential whose API calls go to base.
func (e *triggerEnv) credential(t *testing.T, base string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"name": "bot", "type": "bearer_token", "value": testBotToken, "metadata": map[string]any{"base_url": base}})
	a := e.post(t, "/api/v1/credentials", "", string(body))
	if a.status != http.StatusCreated {
		t.Fatalf("create credential: %d %v", a.status, a.body)
	}
	return a.body["data"].(map[string]any)["id"].(string)
}

// hookCall sends a request to a hook URL (no API key) and returns its status and body.
func hookCall(t *testing.T, method, u string, header map[string]string, body string) (int, []byte) {
	t.Helper()
	st, raw, _ := hookCallHeader(t, method, u, header, body)
	return st, raw
}

// hookCallHeader is hookCall that also returns the response's header.
func hookCallHeader(t *testing.T, method, u string, header map[string]string, body string) (int, []byte, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, resp.Header
}

func dataOf(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var env struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || env.Data == nil {
		t.Fatalf("not an envelope with data: %s", raw)
	}
	return env.Data
}

func slackHeaders(secret, body string, at time.Time) map[string]string {
	ts := strconv.FormatInt(at.Unix(), 10)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("v0:" + ts + ":" + body))
	return map[string]string{"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": "v0=" + hex.EncodeToString(m.Sum(nil))}
}

func slackMessage(eventID, text, ts, threadTS string) string {
	ev := map[string]any{"type": "message", "user": "U123USER", "text": text, "channel": "C42", "ts": ts, "channel_type": "channel"}
	if threadTS != "" {
		ev["thread_ts"] = threadTS
	}
	b, _ := json.Marshal(map[string]any{"type": "event_callback", "team_id": "T1", "event_id": eventID, "event": ev,
		"authorizations": []map[string]any{{"user_id": "UBOT", "is_bot": true}}})
	return string(b)
}

func whsecHeaders(t *testing.T, secret, id, body string, at time.Time) map[string]string {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := wh.Sign(id, at, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"webhook-id": id, "webhook-timestamp": strconv.FormatInt(at.Unix(), 10), "webhook-signature": sig}
}

func hubSignature(secret, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

func teamsAuth(secret, body string) string {
	key, _ := base64.StdEncoding.DecodeString(secret)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(body))
	return "HMAC " + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// waitFor polls cond until it holds or 10 s pass.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTriggerRoutes walks the trigger CRUD: validation naming the field, masking, the
// token shown once, rotation, and another workspace's key getting 404.
func TestTriggerRoutes(t *testing.T) {
	e := newTriggerEnv(t, openTestStore(t, dbs.SQLiteFile(t)), false)
	cred := e.credential(t, "http://127.0.0.1:1")
	var triggerID, token, scheduleID string
	tokenKeyed := func(t *testing.T, body map[string]any) {
		d := body["data"].(map[string]any)
		tok, _ := d["token"].(string)
		if !strings.HasPrefix(tok, "aph_") || len(tok) != 44 || d["hook_url"] != e.ts.URL+"/api/v1/hooks/"+tok || d["token_prefix"] != tok[:11] {
			t.Fatalf("token %q, hook_url %v, prefix %v", tok, d["hook_url"], d["token_prefix"])
		}
		triggerID, token = d["id"].(string), tok
	}
	noSecrets := func(t *testing.T, body map[string]any) {
		raw, _ := json.Marshal(body)
		for _, s := range []string{testSlackSecret, token, "whsec_hook"} {
			if strings.Contains(string(raw), s) {
				t.Fatalf("response holds %q: %s", s, raw)
			}
		}
	}
	slack := fmt.Sprintf(`{"agent_id":%q,"type":"slack","name":"Support bot","config":{"signing_secret":%q,"bot_credential_id":%q},"webhook_url":"https://example.com/done","webhook_secret":"whsec_aG9va2hvb2tob29raG9va2hvb2tob29r"}`, e.agent, testSlackSecret, cred)
	e.run([]scenario{
		{name: "create slack", method: "POST", path: "/api/v1/agent-triggers", body: slack, status: 201,
			fields: map[string]any{"data.type": "slack", "data.enabled": true, "data.config.signing_secret": secretbox.Mask(testSlackSecret),
				"data.config.bot_credential_id": cred, "data.webhook_url": "https://example.com/done", "data.webhook_secret": secretbox.Mask("whsec_aG9va2hvb2tob29raG9va2hvb2tob29r"),
				"data.next_run_at": nil},
			check: func(t *testing.T, body map[string]any) { tokenKeyed(t, body) }},
	})
	e.run([]scenario{
		{name: "get masks and has no token", method: "GET", path: "/api/v1/agent-triggers/" + triggerID, status: 200,
			check: func(t *testing.T, body map[string]any) {
				d := body["data"].(map[string]any)
				if _, ok := d["token"]; ok {
					t.Fatal("token shown again")
				}
				if d["config"].(map[string]any)["signing_secret"] != secretbox.Mask(testSlackSecret) {
					t.Fatalf("config %v", d["config"])
				}
				noSecrets(t, body)
			}},
		{name: "list", method: "GET", path: "/api/v1/agent-triggers?type=slack", status: 200, fields: map[string]any{"pagination.total": 1.0}, check: noSecrets},
		{name: "list bad type", method: "GET", path: "/api/v1/agent-triggers?type=fax", status: 400, code: "bad_request"},
		{name: "unknown config key", method: "POST", path: "/api/v1/agent-triggers", status: 422, code: "validation_error", message: "config.signing_secrte",
			body: fmt.Sprintf(`{"agent_id":%q,"type":"slack","name":"x","config":{"signing_secrte":"a","bot_credential_id":%q}}`, e.agent, cred)},
		{name: "missing signing secret", method: "POST", path: "/api/v1/agent-triggers", status: 422, message: "config.signing_secret",
			body: fmt.Sprintf(`{"agent_id":%q,"type":"slack","name":"x","config":{"bot_credential_id":%q}}`, e.agent, cred)},
		{name: "unknown credential", method: "POST", path: "/api/v1/agent-triggers", status: 422, message: "config.bot_credential_id",
			body: fmt.Sprintf(`{"agent_id":%q,"type":"slack","name":"x","config":{"signing_secret":"s","bot_credential_id":"nope"}}`, e.agent)},
		{name: "wrong type of value", method: "POST", path: "/api/v1/agent-triggers", status: 422, message: "config.respond",
			body: fmt.Sprintf(`{"agent_id":%q,"type":"webhook","name":"x","config":{"respond":"later"}}`, e.agent)},
		{name: "bad whsec", method: "POST", path: "/api/v1/agent-triggers", status: 422, message: "config.signing_secret",
			body: fmt.Sprintf(`{"agent_id":%q,"type":"webhook","name":"x","config":{"signing_secret":"plain"}}`, e.agent)},
		{name: "bad telegram token", method: "POST", path: "/api/v1/agent-triggers", status: 422, message: "config.secret_token",
			body: fmt.Sprintf(`{"agent_id":%q,"type":"telegram","name":"x","config":{"secret_token":"has space","bot_credential_id":%q}}`, e.agent, cred)},
		{name: "unknown type", method: "POST", path: "/api/v1/agent-triggers", status: 422, message: "type",
			body: fmt.Sprintf(`{"agent_id":%q,"type":"fax","name":"x"}`, e.agent)},
		{name: "unknown agent", method: "POST", path: "/api/v1/agent-triggers", status: 422, message: "agent_id",
			body: `{"agent_id":"2o0yqLDGdJdFRBTuhdfPNEZdAvQ","type":"webhook","name":"x"}`},
		{name: "unknown version", method: "POST", path: "/api/v1/agent-triggers", status: 422, message: "version_id",
			body: fmt.Sprintf(`{"agent_id":%q,"type":"webhook","name":"x","version_id":"nope"}`, e.agent)},
		{name: "input on a webhook", method: "POST", path: "/api/v1/agent-triggers", status: 422, message: "input",
			body: fmt.Sprintf(`{"agent_id":%q,"type":"webhook","name":"x","input":{"a":1}}`, e.agent)},
		{name: "mapping on a schedule", method: "POST", path: "/api/v1/agent-triggers", status: 422, message: "input_mapping",
			body: fmt.Sprintf(`{"agent_id":%q,"type":"schedule","name":"x","config":{"cron":"* * * * *"},"input_mapping":{"a":"b"}}`, e.agent)},
		{name: "bad cron", method: "POST", path: "/api/v1/agent-triggers", status: 422, message: "config.cron",
			body: fmt.Sprintf(`{"agent_id":%q,"type":"schedule","name":"x","config":{"cron":"* * * *"}}`, e.agent)},
		{name: "seconds field refused", method: "POST", path: "/api/v1/agent-triggers", status: 422, message: "config.cron",
			body: fmt.Sprintf(`{"agent_id":%q,"type":"schedule","name":"x","config":{"cron":"0 * * * * *"}}`, e.agent)},
		{name: "bad timezone", method: "POST", path: "/api/v1/agent-triggers", status: 422, message: "config.timezone",
			body: fmt.Sprintf(`{"agent_id":%q,"type":"schedule","name":"x","config":{"cron":"0 9 * * *","timezone":"Mars/Olympus"}}`, e.agent)},
		{name: "bad webhook url", method: "POST", path: "/api/v1/agent-triggers", status: 422, message: "webhook_url",
			body: fmt.Sprintf(`{"agent_id":%q,"type":"webhook","name":"x","webhook_url":"ftp://x"}`, e.agent)},
		{name: "create schedule", method: "POST", path: "/api/v1/agent-triggers", status: 201,
			body:   fmt.Sprintf(`{"agent_id":%q,"type":"schedule","name":"Daily","config":{"cron":"0 9 * * *","timezone":"Europe/Berlin"},"input":{"message":"daily report"}}`, e.agent),
			fields: map[string]any{"data.config.catch_up": false, "data.config.timezone": "Europe/Berlin", "data.token_prefix": "", "data.input.message": "daily report"},
			check: func(t *testing.T, body map[string]any) {
				d := body["data"].(map[string]any)
				if _, ok := d["token"]; ok {
					t.Fatal("a schedule got a token")
				}
				next, err := time.Parse(time.RFC3339, d["next_run_at"].(string))
				if err != nil || !next.After(time.Now()) {
					t.Fatalf("next_run_at %v", d["next_run_at"])
				}
				if h := next.In(mustLoc(t, "Europe/Berlin")).Hour(); h != 9 {
					t.Fatalf("next_run_at %v is not 09:00 in Berlin", next)
				}
				scheduleID = d["id"].(string)
			}},
	})
	e.run([]scenario{
		{name: "rotate a schedule", method: "POST", path: "/api/v1/agent-triggers/" + scheduleID + "/rotate", status: 409},
		{name: "disable schedule clears next run", method: "PATCH", path: "/api/v1/agent-triggers/" + scheduleID, body: `{"enabled":false}`, status: 200,
			fields: map[string]any{"data.enabled": false, "data.next_run_at": nil}},
		{name: "patch merges config and keeps the secret", method: "PATCH", path: "/api/v1/agent-triggers/" + triggerID, status: 200,
			body:   `{"name":"Renamed","config":{"bot_user_id":"UBOT"}}`,
			fields: map[string]any{"data.name": "Renamed", "data.config.bot_user_id": "UBOT", "data.config.signing_secret": secretbox.Mask(testSlackSecret)}},
		{name: "patch sends the masked secret back", method: "PATCH", path: "/api/v1/agent-triggers/" + triggerID, status: 200,
			body:   fmt.Sprintf(`{"config":{"signing_secret":%q}}`, secretbox.Mask(testSlackSecret)),
			fields: map[string]any{"data.config.signing_secret": secretbox.Mask(testSlackSecret)}},
		{name: "pin a version", method: "PATCH", path: "/api/v1/agent-triggers/" + triggerID, status: 200,
			body: fmt.Sprintf(`{"version_id":%q}`, e.activeVersion(t)), fields: map[string]any{"data.version_id": e.activeVersion(t)}},
		{name: "pin an unknown version", method: "PATCH", path: "/api/v1/agent-triggers/" + triggerID, status: 422, message: "version_id",
			body: `{"version_id":"nope"}`},
		{name: "unpin the version", method: "PATCH", path: "/api/v1/agent-triggers/" + triggerID, status: 200,
			body: `{"version_id":null}`, fields: map[string]any{"data.version_id": nil}},
		{name: "patch unknown key", method: "PATCH", path: "/api/v1/agent-triggers/" + triggerID, status: 422, message: "config.cron",
			body: `{"config":{"cron":"* * * * *"}}`},
		{name: "patch removing a required key", method: "PATCH", path: "/api/v1/agent-triggers/" + triggerID, status: 422, message: "config.signing_secret",
			body: `{"config":{"signing_secret":null}}`},
	})
	// The secret kept its value through the patches: a call signed with it is accepted.
	body := `{"type":"url_verification","challenge":"abc123","token":"x"}`
	if st, raw := hookCall(t, "POST", e.ts.URL+"/api/v1/hooks/"+token, slackHeaders(testSlackSecret, body, time.Now()), body); st != 200 || string(raw) != "abc123" {
		t.Fatalf("challenge: %d %s", st, raw)
	}
	old := token
	e.run([]scenario{
		{name: "rotate", method: "POST", path: "/api/v1/agent-triggers/" + triggerID + "/rotate", status: 200,
			check: func(t *testing.T, body map[string]any) {
				tokenKeyed(t, body)
				if token == old {
					t.Fatal("same token")
				}
			}},
	})
	if st, _ := hookCall(t, "POST", e.ts.URL+"/api/v1/hooks/"+old, slackHeaders(testSlackSecret, body, time.Now()), body); st != 404 {
		t.Fatalf("old token after rotation: %d", st)
	}
	if st, _ := hookCall(t, "POST", e.ts.URL+"/api/v1/hooks/"+token, slackHeaders(testSlackSecret, body, time.Now()), body); st != 200 {
		t.Fatalf("new token: %d", st)
	}
	// Another workspace's key sees none of it.
	other := "2o0yqLDGdJdFRBTuhdfPNEZdAvZ"
	if _, err := e.store.WorkspaceCreate(context.Background(), &domain.Workspace{ID: other, Name: "Other", Slug: "other"}); err != nil {
		t.Fatal(err)
	}
	saved := e.ws
	e.ws = other
	otherKey := e.newKey(&domain.APIKey{Name: "other", Scopes: domain.Strings{"*"}})
	e.ws = saved
	for _, m := range []string{"GET", "PATCH", "DELETE"} {
		resp := e.do(t, m, "/api/v1/agent-triggers/"+triggerID, map[string]string{"X-API-Key": otherKey}, `{}`)
		if resp.StatusCode != 404 {
			t.Fatalf("%s of another workspace's trigger: %d", m, resp.StatusCode)
		}
	}
	if resp := e.do(t, "POST", "/api/v1/agent-triggers/"+triggerID+"/rotate", map[string]string{"X-API-Key": otherKey}, ""); resp.StatusCode != 404 {
		t.Fatalf("rotate of another workspace's trigger: %d", resp.StatusCode)
	}
	// A key with only the read scope cannot write.
	reader := e.newKey(&domain.APIKey{Name: "reader", Scopes: domain.Strings{"agent_triggers:read"}})
	if resp := e.do(t, "DELETE", "/api/v1/agent-triggers/"+triggerID, map[string]string{"X-API-Key": reader}, ""); resp.StatusCode != 403 {
		t.Fatalf("delete with a read key: %d", resp.StatusCode)
	}
	e.run([]scenario{
		{name: "delete", method: "DELETE", path: "/api/v1/agent-triggers/" + triggerID, status: 200, fields: map[string]any{"data.id": triggerID}},
		{name: "get deleted", method: "GET", path: "/api/v1/agent-triggers/" + triggerID, status: 404},
	})
	if st, _ := hookCall(t, "POST", e.ts.URL+"/api/v1/hooks/"+token, slackHeaders(testSlackSecret, body, time.Now()), body); st != 404 {
		t.Fatalf("token of a deleted trigger: %d", st)
	}
}

func mustLoc(t *testing.T, name string) *time.Location {
	t.Helper()
	l, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestHookWebhook: the generic webhook verifies Standard Webhooks signatures, maps its
// input, refuses input failing the schema without recording anything, deduplicates by
// webhook-id and answers sync when asked.
func TestHookWebhook(t *testing.T) {
	e := newTriggerEnv(t, openTestStore(t, "memory"), false)
	ctx := context.Background()
	schema := json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`)
	v, err := e.c.AgentVersionCreate(ctx, e.agent, client.AgentConfig{Model: "gpt-4o-mini", InputSchema: schema}, "with a schema")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.AgentVersionPromote(ctx, e.agent, v.ID); err != nil {
		t.Fatal(err)
	}
	id, token, hook := e.createTrigger(t, fmt.Sprintf(`{"agent_id":%q,"type":"webhook","name":"CI","config":{"signing_secret":%q},"input_mapping":{"message":"commit.message"}}`, e.agent, testWhsec))
	body := `{"commit":{"message":"fix the build","sha":"abc"}}`
	now := time.Now()
	e.run([]scenario{
		{name: "unknown token", method: "POST", path: "/api/v1/hooks/aph_0000000000000000000000000000000000000000", body: body, status: 404, code: "not_found"},
		{name: "garbage token", method: "POST", path: "/api/v1/hooks/nothing", body: body, status: 404},
		{name: "missing signature", method: "POST", path: "/api/v1/hooks/" + token, body: body, status: 401, code: "unauthorized"},
		{name: "tampered body", method: "POST", path: "/api/v1/hooks/" + token, body: strings.Replace(body, "fix", "break", 1),
			header: whsecHeaders(t, testWhsec, "msg_1", body, now), status: 401},
		{name: "wrong secret", method: "POST", path: "/api/v1/hooks/" + token, body: body,
			header: whsecHeaders(t, "whsec_"+base64.StdEncoding.EncodeToString([]byte("another secret of 24 b!!")), "msg_1", body, now), status: 401},
		{name: "stale timestamp", method: "POST", path: "/api/v1/hooks/" + token, body: body,
			header: whsecHeaders(t, testWhsec, "msg_1", body, now.Add(-6*time.Minute)), status: 401, message: "timestamp"},
		{name: "NUL in the body", method: "POST", path: "/api/v1/hooks/" + token, body: `{"commit":{"message":"a\u0000b"}}`,
			header: whsecHeaders(t, testWhsec, "msg_n", `{"commit":{"message":"a\u0000b"}}`, now), status: 422, message: "commit.message"},
		{name: "schema failure records nothing", method: "POST", path: "/api/v1/hooks/" + token, body: `{"commit":{}}`,
			header: whsecHeaders(t, testWhsec, "msg_0", `{"commit":{}}`, now), status: 422, message: "input"},
	})
	if n := executionCount(t, e.store, e.ws); n != 0 {
		t.Fatalf("%d executions after refused calls", n)
	}
	var first string
	e.run([]scenario{
		{name: "accepted", method: "POST", path: "/api/v1/hooks/" + token, body: body, header: whsecHeaders(t, testWhsec, "msg_1", body, now), status: 202,
			fields: map[string]any{"data.source": "webhook", "data.metadata.trigger_id": id, "data.input.message": "fix the build", "data.agent_id": e.agent},
			check:  func(t *testing.T, b map[string]any) { first = b["data"].(map[string]any)["id"].(string) }},
		{name: "retry is answered from the first", method: "POST", path: "/api/v1/hooks/" + token, body: body, header: whsecHeaders(t, testWhsec, "msg_1", body, now.Add(time.Second)), status: 200,
			check: func(t *testing.T, b map[string]any) {
				if b["data"].(map[string]any)["id"] != first {
					t.Fatalf("retry answered %v, first was %s", b["data"], first)
				}
			}},
	})
	if n := executionCount(t, e.store, e.ws); n != 1 {
		t.Fatalf("%d executions, want 1", n)
	}
	_ = hook
	// respond sync: the finished execution, 200.
	e.run([]scenario{{name: "make sync", method: "PATCH", path: "/api/v1/agent-triggers/" + id, body: `{"config":{"respond":"sync","signing_secret":null},"input_mapping":{}}`, status: 200,
		fields: map[string]any{"data.config.respond": "sync", "data.input_mapping": map[string]any{}}}})
	st, raw := hookCall(t, "POST", hook, nil, `{"message":"sync please"}`)
	if st != 200 {
		t.Fatalf("sync: %d %s", st, raw)
	}
	if d := dataOf(t, raw); d["status"] != "completed" || d["source"] != "webhook" || d["output"] == nil {
		t.Fatalf("sync answer %v", d)
	}
	// Disabled: 404, nothing run.
	e.run([]scenario{{name: "disable", method: "PATCH", path: "/api/v1/agent-triggers/" + id, body: `{"enabled":false}`, status: 200}})
	if st, _ := hookCall(t, "POST", hook, nil, `{"message":"x"}`); st != 404 {
		t.Fatalf("disabled trigger: %d", st)
	}
	if st, _ := hookCall(t, "GET", hook, nil, ""); st != 404 {
		t.Fatalf("GET of a webhook: %d", st)
	}
}

// TestHookDedupConcurrent: the same event delivered by many callers at once runs once; every
// caller gets 202 (the winner) or 200 (the first execution), on SQLite and PostgreSQL.
func TestHookDedupConcurrent(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, url string) {
		e := newTriggerEnv(t, openTestStore(t, url), false)
		_, _, hook := e.createTrigger(t, fmt.Sprintf(`{"agent_id":%q,"type":"webhook","name":"dup","config":{"signing_secret":%q}}`, e.agent, testWhsec))
		body := `{"message":"once only"}`
		h := whsecHeaders(t, testWhsec, "evt_concurrent", body, time.Now())
		const n = 16
		ids := make([]string, n)
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				st, raw := hookCall(t, "POST", hook, h, body)
				statuses[i] = st
				if st == 200 || st == 202 {
					ids[i], _ = dataOf(t, raw)["id"].(string)
				}
			})
		}
		wg.Wait()
		created := 0
		for i, st := range statuses {
			if st == 202 {
				created++
			} else if st != 200 {
				t.Fatalf("caller %d: %d", i, st)
			}
			if ids[i] == "" || ids[i] != ids[0] {
				t.Fatalf("callers answered different executions: %v", ids)
			}
		}
		if created != 1 {
			t.Fatalf("%d callers started a run, want 1 (%v)", created, statuses)
		}
		if c := executionCount(t, e.store, e.ws); c != 1 {
			t.Fatalf("%d executions, want 1", c)
		}
	})
}

// fakePlatform is an httptest server speaking a platform's reply API; it records every
// request body by path.
type fakePlatform struct {
	*httptest.Server
	mu   sync.Mutex
	got  []fakeCall
	resp string
	// failing is how many calls still get a 500 before the platform answers.
	failing atomic.Int32
}

type fakeCall struct {
	path, auth string
	body       map[string]any
}

func newFakePlatform(t *testing.T, resp string) *fakePlatform {
	f := &fakePlatform{resp: resp}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var b map[string]any
		_ = json.Unmarshal(raw, &b)
		w.Header().Set("Content-Type", "application/json")
		if f.failing.Add(-1) >= 0 {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"ok":false,"error":"fatal_error"}`))
			return
		}
		f.mu.Lock()
		f.got = append(f.got, fakeCall{path: r.URL.Path, auth: r.Header.Get("Authorization"), body: b})
		f.mu.Unlock()
		_, _ = w.Write([]byte(f.resp))
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakePlatform) calls() []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeCall(nil), f.got...)
}

// TestHookSlack: signatures are checked, url_verification answered, bot messages ignored,
// two messages of one thread share a chat session whose history the second run sees, each
// reply goes to chat.postMessage in the thread, and a retried event runs nothing.
func TestHookSlack(t *testing.T) {
	e := newTriggerEnv(t, openTestStore(t, "memory"), false)
	slack := newFakePlatform(t, `{"ok":true,"channel":"C42","ts":"1.2"}`)
	cred := e.credential(t, slack.URL)
	id, _, hook := e.createTrigger(t, fmt.Sprintf(`{"agent_id":%q,"type":"slack","name":"Slack","config":{"signing_secret":%q,"bot_credential_id":%q}}`, e.agent, testSlackSecret, cred))
	now := time.Now()
	msg1 := slackMessage("Ev1", "What is the capital of Portugal?", "1700000000.000100", "")
	for name, h := range map[string]map[string]string{
		"no signature":      nil,
		"wrong secret":      slackHeaders("another-secret", msg1, now),
		"stale":             slackHeaders(testSlackSecret, msg1, now.Add(-10*time.Minute)),
		"tampered":          slackHeaders(testSlackSecret, strings.Replace(msg1, "Portugal", "Spain", 1), now),
		"bad signature":     {"X-Slack-Request-Timestamp": strconv.FormatInt(now.Unix(), 10), "X-Slack-Signature": "v0=00"},
		"missing timestamp": {"X-Slack-Signature": slackHeaders(testSlackSecret, msg1, now)["X-Slack-Signature"]},
	} {
		t.Run(name, func(t *testing.T) {
			if st, raw := hookCall(t, "POST", hook, h, msg1); st != 401 {
				t.Fatalf("%d %s", st, raw)
			}
		})
	}
	if c := executionCount(t, e.store, e.ws); c != 0 {
		t.Fatalf("%d executions after unverified calls", c)
	}
	// The bot's own message runs nothing.
	own := strings.Replace(slackMessage("Ev0", "hi", "1700000000.000050", ""), `"user":"U123USER"`, `"user":"UBOT"`, 1)
	if st, _ := hookCall(t, "POST", hook, slackHeaders(testSlackSecret, own, now), own); st != 200 {
		t.Fatalf("own message: %d", st)
	}
	st, raw := hookCall(t, "POST", hook, slackHeaders(testSlackSecret, msg1, now), msg1)
	if st != 202 {
		t.Fatalf("message: %d %s", st, raw)
	}
	x1 := dataOf(t, raw)
	if x1["source"] != "slack" || x1["metadata"].(map[string]any)["trigger_id"] != id || x1["session_id"] == nil {
		t.Fatalf("execution %v", x1)
	}
	waitUntil(t, "the first reply", func() bool { return len(slack.calls()) == 1 })
	// Slack retries the same event (X-Slack-Retry-Num): answered 200, nothing run.
	h := slackHeaders(testSlackSecret, msg1, now)
	h["X-Slack-Retry-Num"], h["X-Slack-Retry-Reason"] = "1", "http_timeout"
	if st, raw := hookCall(t, "POST", hook, h, msg1); st != 200 || dataOf(t, raw)["id"] != x1["id"] {
		t.Fatalf("retry: %d %s", st, raw)
	}
	msg2 := slackMessage("Ev2", "And its population?", "1700000000.000200", "1700000000.000100")
	st, raw = hookCall(t, "POST", hook, slackHeaders(testSlackSecret, msg2, now), msg2)
	if st != 202 {
		t.Fatalf("second message: %d %s", st, raw)
	}
	x2 := dataOf(t, raw)
	if x2["session_id"] != x1["session_id"] {
		t.Fatalf("the thread's messages ran in sessions %v and %v", x1["session_id"], x2["session_id"])
	}
	waitUntil(t, "the second reply", func() bool { return len(slack.calls()) == 2 })
	waitUntil(t, "the reply recorded sent", func() bool {
		r, err := e.store.TriggerReplyGet(context.Background(), x2["id"].(string))
		return err == nil && r.Status == domain.ReplySent && r.Attempts == 1
	})
	if c := executionCount(t, e.store, e.ws); c != 2 {
		t.Fatalf("%d executions, want 2", c)
	}
	for i, c := range slack.calls() {
		if c.path != "/api/chat.postMessage" || c.auth != "Bearer "+testBotToken || c.body["channel"] != "C42" ||
			c.body["thread_ts"] != "1700000000.000100" || c.body["text"] == "" {
			t.Fatalf("reply %d: %+v", i, c)
		}
	}
	// The second run saw the first turn in its history.
	calls := e.rec.snapshot()
	last := calls[len(calls)-1]
	var saw1, sawReply bool
	for _, m := range last {
		if m.Role == llm.RoleUser && strings.Contains(m.Content, "capital of Portugal") {
			saw1 = true
		}
		if m.Role == llm.RoleAssistant && m.Content != "" {
			sawReply = true
		}
	}
	if !saw1 || !sawReply || !strings.Contains(last[len(last)-1].Content, "population") {
		t.Fatalf("second run's messages lack the thread's history: %+v", last)
	}
	msgs, _, err := e.store.ChatMessageList(context.Background(), e.ws, x1["session_id"].(string), domain.Page{Page: 1, Limit: 10})
	if err != nil || len(msgs) != 4 {
		t.Fatalf("session messages: %d %v", len(msgs), err)
	}
	// Another thread is another session.
	msg3 := slackMessage("Ev3", "Something else", "1700000001.000100", "")
	_, raw = hookCall(t, "POST", hook, slackHeaders(testSlackSecret, msg3, now), msg3)
	if dataOf(t, raw)["session_id"] == x1["session_id"] {
		t.Fatal("another thread continued the same session")
	}
	waitUntil(t, "the third reply", func() bool { return len(slack.calls()) == 3 })
}

// TestHookTelegramWhatsAppTeams: each platform's check (401 on a bad one), its reply in its
// own wire format to an httptest fake, and Teams' reply in the response body.
func TestHookTelegramWhatsAppTeams(t *testing.T) {
	e := newTriggerEnv(t, openTestStore(t, "memory"), false)
	t.Run("telegram", func(t *testing.T) {
		tg := newFakePlatform(t, `{"ok":true,"result":{"message_id":5}}`)
		cred := e.credential(t, tg.URL)
		_, _, hook := e.createTrigger(t, fmt.Sprintf(`{"agent_id":%q,"type":"telegram","name":"TG","config":{"secret_token":%q,"bot_credential_id":%q}}`, e.agent, testTelegramSecret, cred))
		update := `{"update_id":1001,"message":{"message_id":7,"from":{"id":4711,"is_bot":false,"first_name":"Ann"},"chat":{"id":4711,"type":"private"},"date":1700000000,"text":"Hello bot"}}`
		if st, _ := hookCall(t, "POST", hook, map[string]string{"X-Telegram-Bot-Api-Secret-Token": "wrong"}, update); st != 401 {
			t.Fatalf("wrong secret token: %d", st)
		}
		if st, _ := hookCall(t, "POST", hook, nil, update); st != 401 {
			t.Fatalf("no secret token: %d", st)
		}
		h := map[string]string{"X-Telegram-Bot-Api-Secret-Token": testTelegramSecret}
		st, raw := hookCall(t, "POST", hook, h, update)
		if st != 202 || dataOf(t, raw)["source"] != "telegram" {
			t.Fatalf("update: %d %s", st, raw)
		}
		if st, _ := hookCall(t, "POST", hook, h, update); st != 200 {
			t.Fatalf("repeated update_id: %d", st)
		}
		waitUntil(t, "the Telegram reply", func() bool { return len(tg.calls()) == 1 })
		c := tg.calls()[0]
		if c.path != "/bot"+testBotToken+"/sendMessage" || c.body["chat_id"] != 4711.0 || c.body["text"] == "" {
			t.Fatalf("sendMessage: %+v", c)
		}
	})
	t.Run("whatsapp", func(t *testing.T) {
		wa := newFakePlatform(t, `{"messaging_product":"whatsapp","contacts":[{"input":"16505551234","wa_id":"16505551234"}],"messages":[{"id":"wamid.out"}]}`)
		cred := e.credential(t, wa.URL)
		_, _, hook := e.createTrigger(t, fmt.Sprintf(`{"agent_id":%q,"type":"whatsapp","name":"WA","config":{"verify_token":%q,"app_secret":%q,"phone_number_id":"106540352242922","credential_id":%q}}`,
			e.agent, testWAVerify, testWAAppSecret, cred))
		if st, raw := hookCall(t, "GET", hook+"?hub.mode=subscribe&hub.verify_token="+testWAVerify+"&hub.challenge=1158201444", nil, ""); st != 200 || string(raw) != "1158201444" {
			t.Fatalf("handshake: %d %s", st, raw)
		}
		if st, _ := hookCall(t, "GET", hook+"?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1", nil, ""); st != 401 {
			t.Fatalf("handshake with a wrong token: %d", st)
		}
		body := `{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{"messaging_product":"whatsapp","metadata":{"phone_number_id":"106540352242922"},"messages":[{"from":"16505551234","id":"wamid.IN1","timestamp":"1","type":"text","text":{"body":"Do you ship to Lisbon?"}}]}}]}]}`
		if st, _ := hookCall(t, "POST", hook, map[string]string{"X-Hub-Signature-256": hubSignature("wrong", body)}, body); st != 401 {
			t.Fatalf("bad signature: %d", st)
		}
		h := map[string]string{"X-Hub-Signature-256": hubSignature(testWAAppSecret, body)}
		if st, raw := hookCall(t, "POST", hook, h, body); st != 202 {
			t.Fatalf("message: %d %s", st, raw)
		}
		if st, _ := hookCall(t, "POST", hook, h, body); st != 200 {
			t.Fatalf("repeated message id: %d", st)
		}
		waitUntil(t, "the WhatsApp reply", func() bool { return len(wa.calls()) == 1 })
		c := wa.calls()[0]
		text, _ := c.body["text"].(map[string]any)
		if c.path != "/v21.0/106540352242922/messages" || c.auth != "Bearer "+testBotToken || c.body["to"] != "16505551234" ||
			c.body["messaging_product"] != "whatsapp" || text == nil || text["body"] == "" {
			t.Fatalf("Graph messages call: %+v", c)
		}
	})
	t.Run("teams", func(t *testing.T) {
		_, _, hook := e.createTrigger(t, fmt.Sprintf(`{"agent_id":%q,"type":"teams","name":"Teams","config":{"hmac_secret":%q}}`, e.agent, testTeamsSecret))
		activity := `{"type":"message","id":"1","text":"<at>Bot</at> summarise the week","from":{"id":"29:1","aadObjectId":"aad-1"},"conversation":{"id":"19:conv"}}`
		if st, _ := hookCall(t, "POST", hook, map[string]string{"Authorization": teamsAuth(base64.StdEncoding.EncodeToString([]byte("other")), activity)}, activity); st != 401 {
			t.Fatalf("bad HMAC: %d", st)
		}
		st, raw := hookCall(t, "POST", hook, map[string]string{"Authorization": teamsAuth(testTeamsSecret, activity)}, activity)
		if st != 200 {
			t.Fatalf("teams: %d %s", st, raw)
		}
		var m map[string]string
		if err := json.Unmarshal(raw, &m); err != nil || m["type"] != "message" || m["text"] == "" || strings.Contains(m["text"], "Sorry") {
			t.Fatalf("teams body: %s", raw)
		}
	})
}

// TestHookEmulator: the emulator verifies and runs hooks too, but sends no platform replies.
func TestHookEmulator(t *testing.T) {
	e := newTriggerEnv(t, openTestStore(t, "memory"), true)
	tg := newFakePlatform(t, `{"ok":true,"result":{}}`)
	cred := e.credential(t, tg.URL)
	_, _, hook := e.createTrigger(t, fmt.Sprintf(`{"agent_id":%q,"type":"telegram","name":"TG","config":{"secret_token":%q,"bot_credential_id":%q}}`, e.agent, testTelegramSecret, cred))
	update := `{"update_id":1,"message":{"message_id":1,"from":{"id":1,"is_bot":false},"chat":{"id":1,"type":"private"},"text":"hi"}}`
	if st, _ := hookCall(t, "POST", hook, nil, update); st != 401 {
		t.Fatalf("emulator without the secret token: %d", st)
	}
	st, raw := hookCall(t, "POST", hook, map[string]string{"X-Telegram-Bot-Api-Secret-Token": testTelegramSecret}, update)
	if st != 202 {
		t.Fatalf("emulator: %d %s", st, raw)
	}
	x := dataOf(t, raw)
	waitUntil(t, "the run", func() bool {
		got, err := e.store.ExecutionGet(context.Background(), e.ws, x["id"].(string))
		return err == nil && domain.IsTerminal(got.Status)
	})
	time.Sleep(100 * time.Millisecond)
	if n := len(tg.calls()); n != 0 {
		t.Fatalf("the emulator sent %d platform replies", n)
	}
}

// TestTriggerSecretsStayHidden: the signing secret, the bot token and the hook token are in
// neither the SQLite file nor the log.
func TestTriggerSecretsStayHidden(t *testing.T) {
	path := dbs.SQLiteFile(t)
	dir := filepath.Dir(path) // the database's files alone
	e := newTriggerEnv(t, openTestStore(t, path), false)
	slack := newFakePlatform(t, `{"ok":true}`)
	cred := e.credential(t, slack.URL)
	_, token, hook := e.createTrigger(t, fmt.Sprintf(`{"agent_id":%q,"type":"slack","name":"Slack","config":{"signing_secret":%q,"bot_credential_id":%q},"webhook_url":"https://example.com/x","webhook_secret":"whsec_Y29tcGxldGlvbi1zZWNyZXQtdmFsdWUh"}`,
		e.agent, testSlackSecret, cred))
	msg := slackMessage("EvS", "hello", "1.1", "")
	if st, _ := hookCall(t, "POST", hook, slackHeaders(testSlackSecret, msg, time.Now()), msg); st != 202 {
		t.Fatalf("message: %d", st)
	}
	bad := slackHeaders("wrong", msg, time.Now())
	hookCall(t, "POST", hook, bad, msg)
	waitUntil(t, "the reply", func() bool { return len(slack.calls()) == 1 })
	var files []byte
	entries, _ := os.ReadDir(dir)
	for _, f := range entries {
		b, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b...)
	}
	if len(files) == 0 {
		t.Fatal("no database files read")
	}
	for _, secret := range []string{testSlackSecret, token, testBotToken, "whsec_Y29tcGxldGlvbi1zZWNyZXQtdmFsdWUh"} {
		if bytes.Contains(files, []byte(secret)) {
			t.Fatalf("the database file holds the secret %q", secret[:6])
		}
		if strings.Contains(e.logBuf.String(), secret) {
			t.Fatalf("the log holds the secret %q", secret[:6])
		}
	}
}

// TestHookReplyRetried: a reply the platform refuses is not lost: it stays owed with its
// error, and the sweep every scheduler runs sends it once its backoff passed — once, however
// many sweeps run.
func TestHookReplyRetried(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, url string) {
		e := newTriggerEnv(t, openTestStore(t, url), false)
		slack := newFakePlatform(t, `{"ok":true}`)
		slack.failing.Store(1)
		cred := e.credential(t, slack.URL)
		_, _, hook := e.createTrigger(t, fmt.Sprintf(`{"agent_id":%q,"type":"slack","name":"Slack","config":{"signing_secret":%q,"bot_credential_id":%q}}`, e.agent, testSlackSecret, cred))
		msg := slackMessage("EvR", "Are you there?", "1700000009.000100", "")
		st, raw := hookCall(t, "POST", hook, slackHeaders(testSlackSecret, msg, time.Now()), msg)
		if st != 202 {
			t.Fatalf("message: %d %s", st, raw)
		}
		id := dataOf(t, raw)["id"].(string)
		ctx := context.Background()
		waitUntil(t, "the failed first attempt", func() bool {
			r, err := e.store.TriggerReplyGet(ctx, id)
			return err == nil && r.Attempts == 1 && r.LastError != ""
		})
		if r, _ := e.store.TriggerReplyGet(ctx, id); r.Status != domain.ReplyPending || !strings.Contains(r.LastError, "500") {
			t.Fatalf("after a refused attempt: %+v", r)
		}
		if n, err := e.replier.Sweep(ctx); err != nil || n != 0 {
			t.Fatalf("sweep before the backoff: %d %v", n, err)
		}
		e.skew.Store(int64(time.Minute))
		var sent atomic.Int32
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				n, err := e.replier.Sweep(ctx)
				if err != nil {
					t.Error(err)
				}
				sent.Add(int32(n))
			})
		}
		wg.Wait()
		if sent.Load() != 1 || len(slack.calls()) != 1 {
			t.Fatalf("sweeps sent %d, platform got %d, want 1", sent.Load(), len(slack.calls()))
		}
		if r, _ := e.store.TriggerReplyGet(ctx, id); r.Status != domain.ReplySent || r.Attempts != 2 {
			t.Fatalf("after the sweep: %+v", r)
		}
	})
}

// TestHookURLFromPublicURL: behind --public-url the hook URL is built from it, not from the
// request's host.
func TestHookURLFromPublicURL(t *testing.T) {
	e := newTestEnv(t, onStore(openTestStore(t, "memory")), asServer(), withConfig(func(c *Config) { c.PublicURL = "https://agents.example.com/" }))
	a, err := e.c.AgentCreate(context.Background(), client.AgentCreateRequest{Name: "A", Type: "simple"})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := e.c.TriggerCreate(context.Background(), client.TriggerCreateRequest{AgentID: a.ID, Type: "webhook", Name: "W"})
	if err != nil {
		t.Fatal(err)
	}
	if tr.HookURL != "https://agents.example.com/api/v1/hooks/"+tr.Token {
		t.Fatalf("hook_url %q", tr.HookURL)
	}
	rot, err := e.c.TriggerRotate(context.Background(), tr.ID)
	if err != nil || rot.HookURL != "https://agents.example.com/api/v1/hooks/"+rot.Token || rot.Token == tr.Token {
		t.Fatalf("rotated: %v %+v", err, rot)
	}
}

// TestHookSlackConcurrentRetries: Slack delivering one event several times at once (its
// retries racing the first delivery) starts one run and sends one reply.
func TestHookSlackConcurrentRetries(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, url string) {
		e := newTriggerEnv(t, openTestStore(t, url), false)
		slack := newFakePlatform(t, `{"ok":true}`)
		cred := e.credential(t, slack.URL)
		_, _, hook := e.createTrigger(t, fmt.Sprintf(`{"agent_id":%q,"type":"slack","name":"Slack","config":{"signing_secret":%q,"bot_credential_id":%q}}`, e.agent, testSlackSecret, cred))
		msg := slackMessage("EvC", "Once, please", "1700000100.000100", "")
		const n = 8
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				h := slackHeaders(testSlackSecret, msg, time.Now())
				if i > 0 {
					h["X-Slack-Retry-Num"] = strconv.Itoa(i)
				}
				statuses[i], _ = hookCall(t, "POST", hook, h, msg)
			})
		}
		wg.Wait()
		started := 0
		for _, st := range statuses {
			switch st {
			case 202:
				started++
			case 200:
			default:
				t.Fatalf("statuses %v", statuses)
			}
		}
		if started != 1 {
			t.Fatalf("%d deliveries started a run: %v", started, statuses)
		}
		waitUntil(t, "the reply", func() bool { return len(slack.calls()) == 1 })
		time.Sleep(200 * time.Millisecond)
		if c := executionCount(t, e.store, e.ws); c != 1 || len(slack.calls()) != 1 {
			t.Fatalf("%d executions, %d replies", c, len(slack.calls()))
		}
	})
}

// TestHookTeamsSlowRun: a Teams run still going when Teams' 5 s are nearly up is answered in
// time with a note naming the execution, rather than with no answer at all.
func TestHookTeamsSlowRun(t *testing.T) {
	e := newTriggerEnv(t, openTestStore(t, "memory"), false)
	agent := slowAgent(t, e.testEnv, 2*time.Second)
	_, _, hook := e.createTrigger(t, fmt.Sprintf(`{"agent_id":%q,"type":"teams","name":"Teams","config":{"hmac_secret":%q}}`, agent, testTeamsSecret))
	activity := `{"type":"message","id":"slow-1","text":"<at>Bot</at> think hard","from":{"id":"29:1"},"conversation":{"id":"19:slow"}}`
	began := time.Now()
	st, raw := hookCall(t, "POST", hook, map[string]string{"Authorization": teamsAuth(testTeamsSecret, activity)}, activity)
	if took := time.Since(began); st != 200 || took > 5*time.Second {
		t.Fatalf("teams: %d after %s: %s", st, took, raw)
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil || m["type"] != "message" || !strings.Contains(m["text"], "Still working") {
		t.Fatalf("teams body: %s", raw)
	}
	// The run goes on; cancel it rather than wait for the engine's shutdown grace.
	_, id, _ := strings.Cut(strings.TrimSuffix(m["text"], ")."), "(execution ")
	if a := e.post(t, "/api/v1/executions/"+id+"/cancel", "", ""); a.status != 200 {
		t.Fatalf("cancel %q: %d %v", id, a.status, a.body)
	}
}

// A trigger's completion webhook: a webhook_url given without a secret gets one, shown once;
// each execution the trigger starts is POSTed there when it ends, signed with that secret (a
// receiver using the Standard Webhooks library accepts it); a secret that is not a Standard
// Webhooks secret is a 422.
func TestTriggerCompletionWebhook(t *testing.T) {
	e := newTriggerEnv(t, openTestStore(t, "memory"), false)
	ctx := context.Background()
	got := make(chan *http.Request, 4)
	bodies := make(chan []byte, 4)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- r
		bodies <- b
	}))
	t.Cleanup(recv.Close)
	d := webhook.New(webhook.Config{Store: e.store, Secrets: e.srv.cfg.Secrets, Logger: e.srv.log,
		TriggerWebhook: webhook.StoreTriggerWebhook(e.srv.cfg.Secrets, e.srv.log), Poll: 20 * time.Millisecond})
	d.Start(ctx)
	t.Cleanup(func() { d.Stop(context.Background()) })

	e.run([]scenario{
		{name: "not a whsec secret", method: "POST", path: "/api/v1/agent-triggers", status: 422, message: "webhook_secret",
			body: fmt.Sprintf(`{"agent_id":%q,"type":"webhook","name":"W","webhook_url":"https://example.com/done","webhook_secret":"plain"}`, e.agent)},
	})
	a := e.post(t, "/api/v1/agent-triggers", "", fmt.Sprintf(`{"agent_id":%q,"type":"webhook","name":"W","webhook_url":%q}`, e.agent, recv.URL))
	if a.status != http.StatusCreated {
		t.Fatalf("create: %d %v", a.status, a.body)
	}
	data := a.body["data"].(map[string]any)
	secret, _ := data["webhook_secret"].(string)
	if err := domain.CheckWebhookSecret("webhook_secret", secret); err != nil {
		t.Fatalf("generated secret %q: %v", secret, err)
	}
	id, token := data["id"].(string), data["token"].(string)
	tr, err := e.c.TriggerGet(ctx, id)
	if err != nil || tr.WebhookSecret == secret || tr.WebhookSecret == "" {
		t.Fatalf("read shows %q (%v); want it masked", tr.WebhookSecret, err)
	}

	st, raw := hookCall(t, "POST", e.ts.URL+"/api/v1/hooks/"+token, nil, `{"message":"deploy done"}`)
	if st != http.StatusAccepted {
		t.Fatalf("hook: %d %s", st, raw)
	}
	var accepted struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &accepted); err != nil {
		t.Fatal(err)
	}
	var r *http.Request
	select {
	case r = <-got:
	case <-time.After(15 * time.Second):
		t.Fatal("no completion webhook received")
	}
	body := <-bodies
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(body, r.Header); err != nil {
		t.Fatalf("the receiver refuses the signature: %v", err)
	}
	var msg struct {
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(body, &msg); err != nil || msg.Type != "execution.completed" || msg.Data["id"] != accepted.Data.ID {
		t.Fatalf("message %s (%v)", body, err)
	}
	l, err := e.c.WebhookDeliveryList(ctx, client.ListWebhookDeliveriesParams{ExecutionID: accepted.Data.ID})
	if err != nil || len(l.Data) != 1 || l.Data[0].TargetType != "trigger" || l.Data[0].TargetID != id {
		t.Fatalf("deliveries %+v %v", l, err)
	}

	// A webhook added by PATCH to a trigger without one gets a secret the same way.
	id2, _, _ := e.createTrigger(t, fmt.Sprintf(`{"agent_id":%q,"type":"webhook","name":"W2"}`, e.agent))
	e.run([]scenario{
		{name: "patch adds a webhook", method: "PATCH", path: "/api/v1/agent-triggers/" + id2, body: `{"webhook_url":"https://example.com/two"}`, status: 200,
			check: func(t *testing.T, b map[string]any) {
				if s, _ := lookup(b, "data.webhook_secret").(string); domain.CheckWebhookSecret("webhook_secret", s) != nil {
					t.Fatalf("secret %q", s)
				}
			}},
	})
}

// TestHookRateLimit: verified hook calls are charged to their trigger's bucket, by the rule
// of API keys: past it a 429 with Retry-After that starts no run; another trigger and the API
// key keep their own buckets, and calls failing verification are not charged.
func TestHookRateLimit(t *testing.T) {
	e := newTestEnv(t, onStore(openTestStore(t, "memory")), asServer(), withConfig(func(c *Config) { c.RateLimit, c.RateBurst = slowRate, 5 }))
	ctx := context.Background()
	a, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Bot", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	te := &triggerEnv{testEnv: e, agent: a.ID}
	_, _, open := te.createTrigger(t, fmt.Sprintf(`{"agent_id":%q,"type":"webhook","name":"Open","input_mapping":{"message":"text"}}`, a.ID))
	id, _, signed := te.createTrigger(t, fmt.Sprintf(`{"agent_id":%q,"type":"webhook","name":"Signed","config":{"signing_secret":%q},"input_mapping":{"message":"text"}}`, a.ID, testWhsec))
	body := `{"text":"hello"}`
	for i := range 5 {
		if st, raw := hookCall(t, "POST", open, nil, body); st != 202 {
			t.Fatalf("call %d within the burst: %d %s", i, st, raw)
		}
	}
	status, raw, h := hookCallHeader(t, "POST", open, nil, body)
	if ra, _ := strconv.Atoi(h.Get("Retry-After")); status != 429 || ra < 1 || !strings.Contains(string(raw), "this trigger") ||
		h.Get("RateLimit-Remaining") != "0" {
		t.Fatalf("past the burst: %d %v %s", status, h, raw)
	}
	list, err := e.c.ExecutionList(ctx, client.ListExecutionsParams{AgentID: a.ID})
	if err != nil || list.Pagination.Total != 5 {
		t.Fatalf("runs started: %v %v", list, err)
	}
	// Unverified calls to the signed trigger charge nothing: its five calls still go through.
	for range 7 {
		if st, _ := hookCall(t, "POST", signed, nil, body); st != 401 {
			t.Fatalf("unsigned call: %d", st)
		}
	}
	for i := range 5 {
		h := whsecHeaders(t, testWhsec, fmt.Sprintf("msg_%d", i), body, time.Now())
		if st, raw := hookCall(t, "POST", signed, h, body); st != 202 {
			t.Fatalf("signed call %d of trigger %s: %d %s", i, id, st, raw)
		}
	}
	if st, _ := hookCall(t, "POST", signed, whsecHeaders(t, testWhsec, "msg_9", body, time.Now()), body); st != 429 {
		t.Fatalf("signed call past the burst: %d", st)
	}
	// The API key's bucket is its own (four of its five calls went to the setup and the list).
	e.run([]scenario{{name: "the key still has a call", method: "GET", path: "/api/v1/agents", status: 200}})
}
