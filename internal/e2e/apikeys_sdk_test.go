package e2e

import (
	"context"
	"errors"
	"testing"

	"github.com/agentplane/agentplane/client"
)

// TestAPIKeySDK drives the key routes through the SDK: create shows the raw key once, it
// works, rotate replaces it, revoke ends it.
func TestAPIKeySDK(t *testing.T) {
	t.Parallel()
	p := start(t, serveEnv(dataDir(t)), "serve")
	ctx := context.Background()
	k, err := p.C.APIKeyCreate(ctx, client.APIKeyCreateRequest{Name: "sdk", Scopes: []client.APIKeyCreateRequestScopes{"agents:read"}})
	if err != nil || len(k.Key) != 43 || k.KeyPrefix != k.Key[:11] {
		t.Fatalf("create: %+v %v", k, err)
	}
	c := client.New(p.URL, client.WithAPIKey(k.Key))
	if _, err := c.AgentList(ctx, client.ListAgentsParams{}); err != nil {
		t.Fatalf("new key refused: %v", err)
	}
	got, err := p.C.APIKeyGet(ctx, k.ID)
	if err != nil || got.Name != "sdk" {
		t.Fatalf("get: %+v %v", got, err)
	}
	l, err := p.C.APIKeyList(ctx, client.ListAPIKeysParams{})
	if err != nil || l.Pagination.Total < 2 {
		t.Fatalf("list: %+v %v", l, err)
	}
	r, err := p.C.APIKeyRotate(ctx, k.ID)
	if err != nil || r.Key == k.Key {
		t.Fatalf("rotate: %+v %v", r, err)
	}
	var ae *client.Error
	if _, err := c.AgentList(ctx, client.ListAgentsParams{}); !errors.As(err, &ae) || ae.Status != 401 {
		t.Fatalf("old key after rotate: %v", err)
	}
	if _, err := p.C.APIKeyRevoke(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	rc := client.New(p.URL, client.WithAPIKey(r.Key))
	if _, err := rc.AgentList(ctx, client.ListAgentsParams{}); !errors.As(err, &ae) || ae.Status != 401 {
		t.Fatalf("revoked key: %v", err)
	}
}
