package api

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// newServerEnv is a test server (auth on) on its own in-memory store.
func newServerEnv(t *testing.T) *testEnv {
	t.Helper()
	st, err := store.Open(context.Background(), "memory")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return newTestEnv(t, onStore(st), asServer())
}

func keyID(t *testing.T, e *testEnv, raw string) string {
	t.Helper()
	k, err := e.store.APIKeyByHash(context.Background(), auth.HashKey(raw))
	if err != nil {
		t.Fatal(err)
	}
	return k.ID
}

func noRawKey(t *testing.T, body map[string]any) {
	t.Helper()
	items, ok := body["data"].([]any)
	if !ok {
		items = []any{body["data"]}
	}
	for _, it := range items {
		m := it.(map[string]any)
		if _, ok := m["key"]; ok {
			t.Fatalf("the raw key is shown: %v", m)
		}
		if _, ok := m["key_hash"]; ok {
			t.Fatalf("the key hash is shown: %v", m)
		}
	}
}

func TestAPIKeyRoutes(t *testing.T) {
	e := newServerEnv(t)
	other := e.newKey(&domain.APIKey{Name: "other", Scopes: domain.Strings{"agents:read"}})
	otherID := keyID(t, e, other)
	victim := e.newKey(&domain.APIKey{Name: "victim", Scopes: domain.Strings{"agents:read"}})
	victimID := keyID(t, e, victim)
	past := domain.Time{Time: time.Now().Add(-time.Minute)}
	expired := e.newKey(&domain.APIKey{Name: "expired", Scopes: domain.Strings{"*"}, ExpiresAt: &past})
	farIP := e.newKey(&domain.APIKey{Name: "far", Scopes: domain.Strings{"*"}, AllowedIPs: domain.Strings{"10.1.2.3"}})
	loopback := e.newKey(&domain.APIKey{Name: "loopback", Scopes: domain.Strings{"*"}, AllowedIPs: domain.Strings{"10.0.0.0/8", "127.0.0.0/8"}})
	origin := e.newKey(&domain.APIKey{Name: "web", Scopes: domain.Strings{"*"}, AllowedOrigins: domain.Strings{"https://app.example"}})
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	base := "/api/v1/api-keys"
	e.run([]scenario{
		{name: "list", method: "GET", path: base, status: 200, fields: map[string]any{"pagination.total": 7}, check: noRawKey},
		{name: "list bad page", method: "GET", path: base + "?page=0", status: 400, code: "bad_request", message: "page"},
		{name: "create", method: "POST", path: base, body: `{"name":"ci","scopes":["agents:read","agents:execute"],"allowed_ips":["10.0.0.1","2001:db8::/32"],"allowed_origins":["HTTPS://App.Example:443"],"expires_at":"` + future + `"}`,
			status: 201, fields: map[string]any{"data.name": "ci", "data.scopes": []string{"agents:read", "agents:execute"}, "data.allowed_origins": []string{"https://app.example"}, "data.workspace_id": e.ws},
			check: func(t *testing.T, body map[string]any) {
				d := body["data"].(map[string]any)
				raw, _ := d["key"].(string)
				if auth.ParseKey(raw) != nil || d["key_prefix"] != auth.KeyPrefix(raw) {
					t.Fatalf("created key %q prefix %v", raw, d["key_prefix"])
				}
			}},
		{name: "create without name", method: "POST", path: base, body: `{"scopes":["*"]}`, status: 422, code: "validation_error", message: "name"},
		{name: "create without scopes", method: "POST", path: base, body: `{"name":"x"}`, status: 422, code: "validation_error", message: "scopes"},
		{name: "create with unknown scope", method: "POST", path: base, body: `{"name":"x","scopes":["agents:read","agents:fly"]}`, status: 422, message: "agents:fly"},
		{name: "create with bad ip", method: "POST", path: base, body: `{"name":"x","scopes":["*"],"allowed_ips":["10.0.0.300"]}`, status: 422, message: "allowed_ips[0]"},
		{name: "create with bad origin", method: "POST", path: base, body: `{"name":"x","scopes":["*"],"allowed_origins":["ftp://x"]}`, status: 422, message: "allowed_origins[0]"},
		{name: "create expiring in the past", method: "POST", path: base, body: `{"name":"x","scopes":["*"],"expires_at":"2001-01-01T00:00:00Z"}`, status: 422, message: "expires_at"},
		{name: "create with bad expiry", method: "POST", path: base, body: `{"name":"x","scopes":["*"],"expires_at":"tomorrow"}`, status: 422, message: "expires_at"},
		{name: "create with wrong type", method: "POST", path: base, body: `{"name":"x","scopes":"*"}`, status: 400, code: "bad_request", message: "scopes"},
		{name: "get", method: "GET", path: base + "/" + otherID, status: 200, fields: map[string]any{"data.name": "other", "data.last_used_at": nil}, check: noRawKey},
		{name: "get unknown", method: "GET", path: base + "/nope", status: 404, code: "not_found", message: "nope"},
		{name: "no key", method: "GET", path: base, header: map[string]string{"X-API-Key": ""}, status: 401, code: "unauthorized", message: "X-API-Key"},
		{name: "malformed key", method: "GET", path: base, header: map[string]string{"X-API-Key": "not-a-key"}, status: 401, code: "unauthorized", message: "invalid API key"},
		{name: "unknown key", method: "GET", path: base, header: map[string]string{"X-API-Key": "ap_" + strings.Repeat("A", 40)}, status: 401, message: "invalid API key"},
		{name: "expired key", method: "GET", path: base, header: map[string]string{"X-API-Key": expired}, status: 401, code: "unauthorized", message: "expired"},
		{name: "key without *", method: "GET", path: base, header: map[string]string{"X-API-Key": other}, status: 403, code: "forbidden", message: "*"},
		{name: "scoped key on its scope", method: "GET", path: "/api/v1/agents", header: map[string]string{"X-API-Key": other}, status: 200},
		{name: "scoped key lacking scope", method: "POST", path: "/api/v1/agents", body: `{"name":"a","type":"simple"}`, header: map[string]string{"X-API-Key": other}, status: 403, message: "agents:write"},
		{name: "ip outside allowlist", method: "GET", path: base, header: map[string]string{"X-API-Key": farIP}, status: 403, code: "forbidden", message: "allowed_ips"},
		{name: "ip inside cidr", method: "GET", path: base, header: map[string]string{"X-API-Key": loopback}, status: 200},
		{name: "origin not allowed", method: "GET", path: base, header: map[string]string{"X-API-Key": origin, "Origin": "https://evil.example"}, status: 403, message: "origin"},
		{name: "origin allowed", method: "GET", path: base, header: map[string]string{"X-API-Key": origin, "Origin": "https://app.example"}, status: 200},
		{name: "no origin header", method: "GET", path: base, header: map[string]string{"X-API-Key": origin}, status: 200},
		{name: "rotate", method: "POST", path: base + "/" + victimID + "/rotate", status: 200, fields: map[string]any{"data.id": victimID},
			check: func(t *testing.T, body map[string]any) {
				if raw, _ := body["data"].(map[string]any)["key"].(string); raw == victim || auth.ParseKey(raw) != nil {
					t.Fatalf("rotated key %q", raw)
				}
			}},
		{name: "old key after rotate", method: "GET", path: "/api/v1/agents", header: map[string]string{"X-API-Key": victim}, status: 401},
		{name: "rotate unknown", method: "POST", path: base + "/nope/rotate", status: 404, code: "not_found"},
		{name: "revoke", method: "DELETE", path: base + "/" + otherID, status: 200, fields: map[string]any{"data.id": otherID}, check: noRawKey},
		{name: "revoked key", method: "GET", path: "/api/v1/agents", header: map[string]string{"X-API-Key": other}, status: 401, message: "invalid API key"},
		{name: "revoke again", method: "DELETE", path: base + "/" + otherID, status: 404, code: "not_found"},
		{name: "get revoked", method: "GET", path: base + "/" + otherID, status: 404},
		{name: "public health", method: "GET", path: "/health", header: map[string]string{"X-API-Key": ""}, status: 200},
	})
	if strings.Contains(e.logBuf.String(), other) || strings.Contains(e.logBuf.String(), victim) {
		t.Fatal("a raw key was logged")
	}
}

// TestAPIKeyTouchIsCoalesced: the first use of a key records last_used_at; further uses within
// the minute write nothing.
func TestAPIKeyTouchIsCoalesced(t *testing.T) {
	e := newServerEnv(t)
	ctx := context.Background()
	id := keyID(t, e, e.key)
	if _, err := e.c.AgentList(ctx, client.ListAgentsParams{}); err != nil {
		t.Fatal(err)
	}
	e.srv.keys.mu.Lock()
	first := e.srv.keys.touched[id]
	e.srv.keys.mu.Unlock()
	if first.IsZero() {
		t.Fatal("first use not recorded")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		k, err := e.store.APIKeyGet(ctx, e.ws, id)
		if err != nil {
			t.Fatal(err)
		}
		if k.LastUsedAt != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("last_used_at never written")
		}
		time.Sleep(5 * time.Millisecond)
	}
	gen := e.store.Generation()
	for range 5 {
		if _, err := e.c.AgentList(ctx, client.ListAgentsParams{}); err != nil {
			t.Fatal(err)
		}
	}
	if g := e.store.Generation(); g != gen {
		t.Fatalf("warm requests wrote to the store (%d writes)", g-gen)
	}
}
