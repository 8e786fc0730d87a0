package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/assets"
	"github.com/agentplane/agentplane/internal/blob"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/retention"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/store"
)

func TestWorkspaceRetention(t *testing.T) {
	e := newServerEnvWith(t, func(c *Config) { c.Retention = Retention{Days: 30, MaxDays: 90} })
	owner := newUser(t, e, "owner@example.com", "x", e.ws, domain.RoleOwner)
	admin := newUser(t, e, "admin@example.com", "x", e.ws, domain.RoleAdmin)
	member := newUser(t, e, "member@example.com", "x", e.ws, domain.RoleMember)
	outsider := newUser(t, e, "outsider@example.com", "x", "", "")
	ownerTok, adminTok, memberTok, outsiderTok := token(t, owner), token(t, admin), token(t, member), token(t, outsider)
	readKey := e.newKey(&domain.APIKey{Name: "read", Scopes: domain.Strings{"agents:read"}})
	path := "/api/v1/workspaces/" + e.ws
	e.run([]scenario{
		{name: "forever by default", method: "GET", path: path, status: 200, fields: map[string]any{"data.retention_days": 0}},
		{name: "key with *", method: "PATCH", path: path, body: `{"retention_days":60}`, status: 200, fields: map[string]any{"data.retention_days": 60}},
		{name: "key without *", method: "PATCH", path: path, header: map[string]string{"X-API-Key": readKey}, body: `{"retention_days":10}`,
			status: 403, code: "forbidden", message: "*"},
		{name: "admin", method: "PATCH", path: path, header: bearer(adminTok, ""), body: `{"retention_days":45}`, status: 200,
			fields: map[string]any{"data.retention_days": 45}},
		{name: "owner", method: "PATCH", path: path, header: bearer(ownerTok, ""), body: `{"retention_days":90}`, status: 200,
			fields: map[string]any{"data.retention_days": 90}},
		{name: "member", method: "PATCH", path: path, header: bearer(memberTok, ""), body: `{"retention_days":7}`, status: 403, code: "forbidden", message: "owner or admin"},
		{name: "outsider", method: "PATCH", path: path, header: bearer(outsiderTok, ""), body: `{"retention_days":7}`, status: 404, code: "not_found"},
		{name: "another workspace's key", method: "PATCH", path: "/api/v1/workspaces/2o0yqLDGdJdFRBTuhdfPNEZdAvZ", body: `{"retention_days":7}`, status: 404},
		{name: "over the ceiling", method: "PATCH", path: path, body: `{"retention_days":91}`, status: 422, code: "validation_error", message: "retention_days: 91 days is over this server's ceiling of 90"},
		{name: "forever under a ceiling", method: "PATCH", path: path, body: `{"retention_days":0}`, status: 422, message: "ceiling of 90 days"},
		{name: "negative", method: "PATCH", path: path, body: `{"retention_days":-1}`, status: 422, message: "retention_days"},
		{name: "not a number", method: "PATCH", path: path, body: `{"retention_days":"7"}`, status: 400, code: "bad_request"},
		{name: "fraction", method: "PATCH", path: path, body: `{"retention_days":1.5}`, status: 400, code: "bad_request"},
		{name: "nothing to change", method: "PATCH", path: path, body: `{}`, status: 200, fields: map[string]any{"data.retention_days": 90}},
		{name: "in the list", method: "GET", path: "/api/v1/workspaces", header: bearer(ownerTok, ""), status: 200,
			fields: map[string]any{"data.0.retention_days": 90}},
		{name: "new workspaces get the server's default", method: "POST", path: "/api/v1/workspaces", header: bearer(outsiderTok, ""),
			body: `{"name":"Fresh"}`, status: 201, fields: map[string]any{"data.retention_days": 30}},
	})
}

func TestWorkspaceRetentionWithoutCeiling(t *testing.T) {
	e := newServerEnv(t)
	path := "/api/v1/workspaces/" + e.ws
	e.run([]scenario{
		{name: "long", method: "PATCH", path: path, body: `{"retention_days":3650}`, status: 200, fields: map[string]any{"data.retention_days": 3650}},
		{name: "forever", method: "PATCH", path: path, body: `{"retention_days":0}`, status: 200, fields: map[string]any{"data.retention_days": 0}},
		{name: "past a century", method: "PATCH", path: path, body: `{"retention_days":36501}`, status: 422, message: "retention_days"},
	})
}

func TestWorkspaceDelete(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "memory")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	blobs := blob.NewMemory()
	e := newTestEnv(t, onStore(st), asServer(), withEngine(func(c *runtime.Config) { c.Assets = assets.New(st, blobs, 0) }))
	owner := newUser(t, e, "owner@example.com", "x", e.ws, domain.RoleOwner)
	admin := newUser(t, e, "admin@example.com", "x", e.ws, domain.RoleAdmin)
	member := newUser(t, e, "member@example.com", "x", e.ws, domain.RoleMember)
	outsider := newUser(t, e, "outsider@example.com", "x", "", "")
	ownerTok, adminTok, memberTok, outsiderTok := token(t, owner), token(t, admin), token(t, member), token(t, outsider)
	path := "/api/v1/workspaces/" + e.ws

	// History in the workspace: a finished run (with its trace), an agent, an asset.
	var agentID string
	e.run([]scenario{
		{name: "agent", method: "POST", path: "/api/v1/agents", body: `{"name":"A","type":"simple","config":{"model":"gpt-4o"}}`, status: 201,
			check: func(t *testing.T, body map[string]any) { agentID = body["data"].(map[string]any)["id"].(string) }},
	})
	x := postJSON(t, e, "/api/v1/agents/"+agentID+"/execute", `{"input":{"message":"hi"}}`)
	if x["status"] != "completed" {
		t.Fatalf("execution: %v", x)
	}
	asset, err := e.srv.engine.Assets().Create(ctx, assets.Input{WorkspaceID: e.ws, MimeType: "text/plain", Source: "upload"}, []byte("bytes"))
	if err != nil {
		t.Fatal(err)
	}

	e.run([]scenario{
		{name: "key cannot", method: "DELETE", path: path, status: 403, code: "forbidden", message: "an API key cannot delete its own workspace"},
		{name: "another workspace's key", method: "DELETE", path: "/api/v1/workspaces/2o0yqLDGdJdFRBTuhdfPNEZdAvZ", status: 404, code: "not_found"},
		{name: "admin cannot", method: "DELETE", path: path, header: bearer(adminTok, ""), status: 403, message: "needs owner"},
		{name: "member cannot", method: "DELETE", path: path, header: bearer(memberTok, ""), status: 403},
		{name: "outsider", method: "DELETE", path: path, header: bearer(outsiderTok, ""), status: 404, code: "not_found"},
		// The key is in this node's cache now.
		{name: "key works before", method: "GET", path: "/api/v1/agents", status: 200},
		{name: "owner deletes", method: "DELETE", path: path, header: bearer(ownerTok, ""), status: 202,
			fields: map[string]any{"data.id": e.ws},
			check: func(t *testing.T, body map[string]any) {
				if body["data"].(map[string]any)["deleted_at"] == nil {
					t.Fatalf("no deleted_at: %v", body)
				}
			}},
		{name: "key is refused at once", method: "GET", path: "/api/v1/agents", status: 401, code: "unauthorized"},
		{name: "member header is refused", method: "GET", path: "/api/v1/agents", header: bearer(ownerTok, e.ws), status: 403, message: "not a member"},
		{name: "get is 404", method: "GET", path: path, header: bearer(ownerTok, ""), status: 404},
		{name: "not listed", method: "GET", path: "/api/v1/workspaces", header: bearer(ownerTok, ""), status: 200, fields: map[string]any{"pagination.total": 0}},
		{name: "patch is 404", method: "PATCH", path: path, header: bearer(ownerTok, ""), body: `{"retention_days":1}`, status: 404},
		{name: "second delete is 404", method: "DELETE", path: path, header: bearer(ownerTok, ""), status: 404},
	})

	// The leader's purge removes every row, blobs included, then the workspace.
	p := retention.New(retention.Config{Store: e.store, DeleteAsset: func(ctx context.Context, ws, id string) error {
		_, err := e.srv.engine.Assets().Delete(ctx, ws, id)
		return err
	}})
	r, err := p.Pass(ctx)
	if err != nil || r.Workspaces != 1 || r.Executions != 1 || r.Assets != 1 {
		t.Fatalf("purge: %+v %v", r, err)
	}
	if _, err := e.store.ExecutionGet(ctx, e.ws, x["id"].(string)); !store.IsNotFound(err) {
		t.Fatalf("execution after purge: %v", err)
	}
	if ids, _ := e.store.WorkspaceListDeleted(ctx, 10); len(ids) != 0 {
		t.Fatalf("still listed as deleted: %v", ids)
	}
	if _, err := blobs.Stat(ctx, e.ws, asset.SHA256); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("asset content after purge: %v", err)
	}
}

// TestWorkspaceDeleteReachesEveryNode: on PostgreSQL, a key cached by another node is refused
// there at once too, not after the cache's 30 s.
func TestWorkspaceDeleteReachesEveryNode(t *testing.T) {
	u := testPostgresURL(t)
	node := func() *testEnv {
		return newTestEnv(t, onStore(openTestStore(t, u)), asServer(), withEngine(func(c *runtime.Config) { c.PostgresURL = u }))
	}
	a, b := node(), node()
	owner := newUser(t, a, "owner@example.com", "x", a.ws, domain.RoleOwner)
	b.key = a.key
	b.run([]scenario{{name: "b caches a's key", method: "GET", path: "/api/v1/agents", status: 200}})
	a.run([]scenario{{name: "a deletes", method: "DELETE", path: "/api/v1/workspaces/" + a.ws, header: bearer(token(t, owner), ""), status: 202}})
	deadline := time.Now().Add(3 * time.Second)
	for {
		req, _ := http.NewRequest("GET", b.ts.URL+"/api/v1/agents", nil)
		req.Header.Set("X-API-Key", a.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("node b still answers the deleted workspace's key: %d", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// postJSON posts body with the env's key and returns the data of the answer.
func postJSON(t *testing.T, e *testEnv, path, body string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest("POST", e.ts.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", e.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Data map[string]any `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Data
}
