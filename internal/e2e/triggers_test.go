package e2e

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
)

// TestTriggersEndToEnd: on the emulator and on serve (SQLite, and PostgreSQL when set), a
// webhook trigger made through the SDK gives a hook URL that runs the agent without an API
// key, once per webhook-id; the rotated token replaces the old one.
func TestTriggersEndToEnd(t *testing.T) {
	t.Parallel()
	for name, p := range targets(t) {
		t.Run(name, func(t *testing.T) {
			defer p.stop(t)
			ctx := context.Background()
			c := p.C
			a := mustAgent(t, c, "simple", client.AgentConfig{})
			tr, err := c.TriggerCreate(ctx, client.TriggerCreateRequest{AgentID: a.ID, Type: "webhook", Name: "CI",
				InputMapping: map[string]string{"message": "head_commit.message"}})
			if err != nil {
				t.Fatal(err)
			}
			if tr.Token == "" || !strings.HasPrefix(tr.HookURL, p.URL+"/api/v1/hooks/aph_") {
				t.Fatalf("token %q hook_url %q (server %s)", tr.Token, tr.HookURL, p.URL)
			}
			post := func(hook, id string) (int, map[string]any) {
				req, _ := http.NewRequest("POST", hook, strings.NewReader(`{"head_commit":{"message":"release 1.2"}}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Idempotency-Key", id)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				raw, _ := io.ReadAll(resp.Body)
				var env struct {
					Data map[string]any `json:"data"`
				}
				_ = json.Unmarshal(raw, &env)
				return resp.StatusCode, env.Data
			}
			st, x := post(tr.HookURL, "delivery-1")
			if st != http.StatusAccepted || x["source"] != "webhook" {
				t.Fatalf("hook: %d %v", st, x)
			}
			if st, again := post(tr.HookURL, "delivery-1"); st != http.StatusOK || again["id"] != x["id"] {
				t.Fatalf("redelivery: %d %v", st, again)
			}
			deadline := time.Now().Add(15 * time.Second)
			for {
				got, err := c.ExecutionGet(ctx, x["id"].(string))
				if err != nil {
					t.Fatal(err)
				}
				if got.Status == "completed" {
					if got.Input["message"] != "release 1.2" {
						t.Fatalf("input %v", got.Input)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("execution still %s", got.Status)
				}
				time.Sleep(50 * time.Millisecond)
			}
			rot, err := c.TriggerRotate(ctx, tr.ID)
			if err != nil {
				t.Fatal(err)
			}
			if st, _ := post(tr.HookURL, "delivery-2"); st != http.StatusNotFound {
				t.Fatalf("old token after rotation: %d", st)
			}
			if st, _ := post(rot.HookURL, "delivery-2"); st != http.StatusAccepted {
				t.Fatalf("new token: %d", st)
			}
			list, err := c.TriggerList(ctx, client.ListAgentTriggersParams{AgentID: a.ID})
			if err != nil || len(list.Data) != 1 {
				t.Fatalf("list: %v %+v", err, list)
			}
			if _, err := c.TriggerDelete(ctx, tr.ID); err != nil {
				t.Fatal(err)
			}
			slackReplies(t, name, c, a.ID)
		})
	}
}

// slackEvent posts a Slack event callback signed with secret to a trigger's hook and wants
// its 202.
func slackEvent(t *testing.T, hook, secret, eventID, event string) {
	t.Helper()
	if st := slackEventStatus(t, hook, secret, eventID, event); st != http.StatusAccepted {
		t.Fatalf("slack event %s: %d", eventID, st)
	}
}

// slackEventStatus delivers a signed Slack event and returns the hook's status.
func slackEventStatus(t *testing.T, hook, secret, eventID, event string) int {
	t.Helper()
	body := `{"type":"event_callback","team_id":"T1","event_id":"` + eventID + `","event":` + event + `}`
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("v0:" + ts + ":" + body))
	req, _ := http.NewRequest("POST", hook, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Slack-Request-Timestamp", ts)
	req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(m.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// slackReplies: a signed Slack message runs the agent; serve replies in the thread through
// chat.postMessage (a fake Slack here), the emulator does not.
func slackReplies(t *testing.T, name string, c *client.Client, agentID string) {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	var got []map[string]any
	slack := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		_ = json.NewDecoder(r.Body).Decode(&b)
		b["path"], b["auth"] = r.URL.Path, r.Header.Get("Authorization")
		mu.Lock()
		got = append(got, b)
		mu.Unlock()
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer slack.Close()
	cred, err := c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "slack bot", Type: "bearer_token", Value: "xoxb-e2e-token",
		Metadata: map[string]any{"base_url": slack.URL}})
	if err != nil {
		t.Fatal(err)
	}
	const secret = "e2e-slack-signing-secret"
	tr, err := c.TriggerCreate(ctx, client.TriggerCreateRequest{AgentID: agentID, Type: "slack", Name: "Slack",
		Config: map[string]any{"signing_secret": secret, "bot_credential_id": cred.ID}})
	if err != nil {
		t.Fatal(err)
	}
	slackEvent(t, tr.HookURL, secret, "Ev1", `{"type":"app_mention","user":"U1","text":"hello","channel":"C1","ts":"1.5"}`)
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }
	if name == "emulator" {
		time.Sleep(500 * time.Millisecond)
		if n := count(); n != 0 {
			t.Fatalf("the emulator sent %d replies", n)
		}
		return
	}
	deadline := time.Now().Add(15 * time.Second)
	for count() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no reply reached Slack")
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if r := got[0]; r["path"] != "/api/chat.postMessage" || r["auth"] != "Bearer xoxb-e2e-token" || r["channel"] != "C1" || r["thread_ts"] != "1.5" || r["text"] == "" {
		t.Fatalf("reply %v", r)
	}
}
