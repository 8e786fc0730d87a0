package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
)

// TestTriggersEndToEnd: on the emulator and on serve (SQLite, and PostgreSQL when set), a
// webhook trigger made through the SDK gives a hook URL that runs the agent without an API
// key, once per webhook-id; the rotated token replaces the old one.
func TestTriggersEndToEnd(t *testing.T) {
	for name, p := range targets(t) {
		t.Run(name, func(t *testing.T) {
			defer p.stop(t)
			ctx := context.Background()
			c := p.C
			a := mustAgent(t, c, "simple", client.AgentConfig{})
			tr, err := c.TriggerCreate(ctx, client.TriggerCreate{AgentID: a.ID, Type: "webhook", Name: "CI",
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
			list, err := c.TriggerList(ctx, client.TriggerListOptions{AgentID: a.ID})
			if err != nil || len(list.Data) != 1 || list.Data[0].Token != "" {
				t.Fatalf("list: %v %+v", err, list)
			}
			if _, err := c.TriggerDelete(ctx, tr.ID); err != nil {
				t.Fatal(err)
			}
		})
	}
}
