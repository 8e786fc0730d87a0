package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/triggers/platform"
)

// echoChat is a chat platform that exists only in this test: docs/EXTENDING.md's trigger
// platform checklist, followed once. A call carries X-Echo-Token (config.token) and a JSON
// {id, user, text}; the answer goes back in the HTTP response, as Teams does.
type echoChat struct{}

func (echoChat) Verify(r *http.Request, body []byte, cfg platform.Config, now time.Time) error {
	if tok, _ := cfg["token"].(string); tok == "" || r.Header.Get("X-Echo-Token") != tok {
		return fmt.Errorf("%w: X-Echo-Token does not match", platform.ErrVerify)
	}
	return nil
}

func (echoChat) Parse(r *http.Request, body []byte, cfg platform.Config) (*platform.Event, error) {
	var m struct{ ID, User, Text string }
	if err := json.Unmarshal(body, &m); err != nil || m.ID == "" {
		return nil, fmt.Errorf("%w: want {id, user, text}", platform.ErrParse)
	}
	return &platform.Event{DedupKey: m.ID, ConversationKey: m.User, User: m.User, Text: m.Text,
		Payload: map[string]any{"id": m.ID}}, nil
}

func (echoChat) Reply(ctx context.Context, hc *http.Client, cred platform.Credential, ev *platform.Event, text string) (*platform.Response, error) {
	b, _ := json.Marshal(map[string]string{"reply": text})
	return &platform.Response{Status: http.StatusOK, ContentType: "application/json", Body: b}, nil
}

func (echoChat) Sync() bool { return true }

// TestRegisteredTriggerPlatform registers a platform from a test and drives it through the
// API: created, checked, masked, documented, called and answered, with no other change.
// It is not parallel: the registry is global, and parallel tests start after it ends.
func TestRegisteredTriggerPlatform(t *testing.T) {
	platform.Register(platform.Spec{
		Type: "echo_chat",
		Doc:  "echo_chat: token.",
		Fields: []platform.Field{{Name: "token", Kind: platform.KindSecret, Required: true, Check: func(v string) error {
			if len(v) < 8 {
				return errors.New("must be at least 8 characters")
			}
			return nil
		}}},
		Platform: echoChat{}, Chat: true,
	})
	t.Cleanup(func() { platform.Unregister("echo_chat") })
	e := newTriggerEnv(t, openTestStore(t, "memory"), false)

	t.Run("its config is checked", func(t *testing.T) {
		e.run([]scenario{
			{name: "unknown key", method: "POST", path: "/api/v1/agent-triggers", status: 422, message: "config.colour",
				body: fmt.Sprintf(`{"agent_id":%q,"type":"echo_chat","name":"E","config":{"token":"long-enough","colour":"red"}}`, e.agent)},
			{name: "its own check", method: "POST", path: "/api/v1/agent-triggers", status: 422, message: "config.token: must be at least 8",
				body: fmt.Sprintf(`{"agent_id":%q,"type":"echo_chat","name":"E","config":{"token":"short"}}`, e.agent)},
		})
	})

	t.Run("the document lists it", func(t *testing.T) {
		doc, _ := getDoc(t, e.testEnv, nil)
		if enum := enumOf(schemaProp(t, doc, "Trigger", "type")); !strings.Contains(strings.Join(enum, ","), "echo_chat") {
			t.Errorf("Trigger.type enum %v lacks echo_chat", enum)
		}
	})

	_, _, hook := e.createTrigger(t, fmt.Sprintf(`{"agent_id":%q,"type":"echo_chat","name":"E","config":{"token":"long-enough"}}`, e.agent))
	call := `{"id":"m1","user":"ann","text":"hello"}`

	t.Run("a call that does not verify runs nothing", func(t *testing.T) {
		if st, _ := hookCall(t, "POST", hook, map[string]string{"X-Echo-Token": "wrong"}, call); st != http.StatusUnauthorized {
			t.Errorf("wrong token: %d", st)
		}
	})

	t.Run("a call runs the agent and is answered", func(t *testing.T) {
		st, raw := hookCall(t, "POST", hook, map[string]string{"X-Echo-Token": "long-enough"}, call)
		var m map[string]string
		if st != http.StatusOK || json.Unmarshal(raw, &m) != nil || m["reply"] == "" || strings.Contains(m["reply"], "Sorry") {
			t.Fatalf("answer %d %s", st, raw)
		}
		if n := executionCount(t, e.store, e.ws); n != 1 {
			t.Errorf("%d executions, want 1", n)
		}
	})
}
