package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/client"
)

// TestServeLoginAndMembership: a user made with `agentplane users create` logs in, uses the
// JWT with X-Workspace-ID on a workspace it belongs to, and is refused elsewhere; on SQLite
// and, when TEST_DATABASE_URL is set, PostgreSQL.
func TestServeLoginAndMembership(t *testing.T) {
	t.Parallel()
	forEachServeDB(t, loginSuite)
}

func loginSuite(t *testing.T, env map[string]string) {
	ctx := context.Background()
	p := start(t, env, "serve") // creates the database and the default workspace
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte("correct horse battery staple\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out := exit(t, env, "users", "create", "--email", "Ada@Example.com", "--password-file", pw, "--role", "member"); code != 0 {
		t.Fatalf("users create: %d %s", code, out)
	}
	login := func(password string) (int, map[string]any) {
		body, _ := json.Marshal(map[string]string{"email": "ada@example.com", "password": password})
		status, raw, _, err := p.C.Raw(ctx, http.MethodPost, "/api/v1/auth/login", body, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		_ = json.Unmarshal(raw, &out)
		return status, out
	}
	if status, _ := login("wrong"); status != 401 {
		t.Fatalf("wrong password: %d", status)
	}
	status, out := login("correct horse battery staple")
	if status != 200 {
		t.Fatalf("login: %d %v", status, out)
	}
	token := out["data"].(map[string]any)["token"].(string)
	// The default workspace is the one the bootstrap key acts in.
	health, raw, _, _ := p.C.Raw(ctx, http.MethodGet, "/api/v1/workspaces", nil, nil)
	var list struct {
		Data []struct{ ID, Slug string } `json:"data"`
	}
	_ = json.Unmarshal(raw, &list)
	if health != 200 || len(list.Data) != 1 || list.Data[0].Slug != "default" {
		t.Fatalf("workspaces seen by the key: %d %s", health, raw)
	}
	def := list.Data[0].ID
	// The login answer lists the user's workspaces with their role.
	wss, _ := out["data"].(map[string]any)["workspaces"].([]any)
	if len(wss) != 1 || wss[0].(map[string]any)["id"] != def || wss[0].(map[string]any)["slug"] != "default" ||
		wss[0].(map[string]any)["role"] != "member" || wss[0].(map[string]any)["name"] != "Default" {
		t.Fatalf("login workspaces %v", out["data"])
	}
	user := client.New(p.URL, client.WithBearer(token), client.WithWorkspace(def))
	if _, err := user.AgentList(ctx, client.ListAgentsParams{}); err != nil {
		t.Fatalf("member on its workspace: %v", err)
	}
	// X-Workspace-ID may name the workspace by its slug.
	bySlug := client.New(p.URL, client.WithBearer(token), client.WithWorkspace("default"))
	if _, err := bySlug.AgentList(ctx, client.ListAgentsParams{}); err != nil {
		t.Fatalf("member on its workspace by slug: %v", err)
	}
	// An API key sent as a bearer token (OpenAI-style tooling) is a key.
	asBearer := client.New(p.URL, client.WithBearer(p.Key))
	if _, err := asBearer.AgentList(ctx, client.ListAgentsParams{}); err != nil {
		t.Fatalf("API key as a bearer token: %v", err)
	}
	var ae0 *client.Error
	if _, err := client.New(p.URL, client.WithBearer(p.Key+"x")).AgentList(ctx, client.ListAgentsParams{}); !errors.As(err, &ae0) || ae0.Status != 401 ||
		!strings.Contains(ae0.Message, "API key") {
		t.Fatalf("a bad key as a bearer token: %v", err)
	}
	var ae *client.Error
	noWS := client.New(p.URL, client.WithBearer(token))
	if _, err := noWS.AgentList(ctx, client.ListAgentsParams{}); !errors.As(err, &ae) || ae.Status != 400 {
		t.Fatalf("bearer without X-Workspace-ID: %v", err)
	}
	other := client.New(p.URL, client.WithBearer(token), client.WithWorkspace("2o0yqLDGdJdFRBTuhdfPNEZdAvZ"))
	if _, err := other.AgentList(ctx, client.ListAgentsParams{}); !errors.As(err, &ae) || ae.Status != 403 {
		t.Fatalf("bearer on a workspace it is not a member of: %v", err)
	}
	if _, err := user.APIKeyList(ctx, client.ListAPIKeysParams{}); !errors.As(err, &ae) || ae.Status != 403 || !strings.Contains(ae.Message, "*") {
		t.Fatalf("a member managing keys: %v", err)
	}
	// Workspace B: the user creates it (and owns it), makes a key there, and that key sees
	// nothing of the default workspace: every lookup of A's agent is a 404.
	status, raw, _, err := user.Raw(ctx, http.MethodPost, "/api/v1/workspaces", []byte(`{"name":"Team B"}`), nil)
	if err != nil || status != 201 {
		t.Fatalf("create workspace: %d %s %v", status, raw, err)
	}
	var created struct {
		Data struct{ ID string } `json:"data"`
	}
	_ = json.Unmarshal(raw, &created)
	ownerB := client.New(p.URL, client.WithBearer(token), client.WithWorkspace(created.Data.ID))
	keyB, err := ownerB.APIKeyCreate(ctx, client.APIKeyCreateRequest{Name: "b", Scopes: []client.APIKeyCreateRequestScopes{"*"}})
	if err != nil {
		t.Fatalf("key of workspace B: %v", err)
	}
	agentA, err := p.C.AgentCreate(ctx, client.AgentCreateRequest{Name: "Only in A", Type: "simple"})
	if err != nil {
		t.Fatal(err)
	}
	b := client.New(p.URL, client.WithAPIKey(keyB.Key))
	if _, err := b.AgentGet(ctx, agentA.ID); !errors.As(err, &ae) || ae.Status != 404 {
		t.Fatalf("agent of A read with a key of B: %v", err)
	}
	if _, err := b.Execute(ctx, agentA.ID, client.ExecuteRequest{Input: map[string]any{}}); !errors.As(err, &ae) || ae.Status != 404 {
		t.Fatalf("agent of A run with a key of B: %v", err)
	}
	if _, err := b.AgentDelete(ctx, agentA.ID); !errors.As(err, &ae) || ae.Status != 404 {
		t.Fatalf("agent of A deleted with a key of B: %v", err)
	}
	if l, err := b.AgentList(ctx, client.ListAgentsParams{}); err != nil || l.Pagination.Total != 0 {
		t.Fatalf("workspace B lists A's agents: %+v %v", l, err)
	}
	bad := client.New(p.URL, client.WithBearer(token+"x"), client.WithWorkspace(def))
	if _, err := bad.AgentList(ctx, client.ListAgentsParams{}); !errors.As(err, &ae) || ae.Status != 401 {
		t.Fatalf("tampered token: %v", err)
	}
}
