package client

import (
	"context"
	"net/http"
	"time"
)

// APIKey is a key of the workspace; the raw key is never part of it.
type APIKey struct {
	ID             string     `json:"id"`
	WorkspaceID    string     `json:"workspace_id"`
	Name           string     `json:"name"`
	KeyPrefix      string     `json:"key_prefix"`
	Scopes         []string   `json:"scopes"`
	AllowedIPs     []string   `json:"allowed_ips"`
	AllowedOrigins []string   `json:"allowed_origins"`
	ExpiresAt      *time.Time `json:"expires_at"`
	LastUsedAt     *time.Time `json:"last_used_at"`
	CreatedAt      time.Time  `json:"created_at"`
}

// APIKeyWithSecret is a key as created or rotated: Key holds the raw key, shown only once.
type APIKeyWithSecret struct {
	APIKey
	Key string `json:"key"`
}

// APIKeyCreate is the body of APIKeyCreate.
type APIKeyCreate struct {
	Name           string     `json:"name"`
	Scopes         []string   `json:"scopes"`
	AllowedIPs     []string   `json:"allowed_ips,omitempty"`
	AllowedOrigins []string   `json:"allowed_origins,omitempty"`
	ExpiresAt      *time.Time `json:"expires_at,omitempty"`
}

// APIKeyList lists the workspace's keys (never the raw keys). Needs a "*" key.
func (c *Client) APIKeyList(ctx context.Context, o ListOptions) (*List[APIKey], error) {
	return list[APIKey](ctx, c, "/api/v1/api-keys", o.values())
}

// APIKeyCreate creates a key and returns it with the raw key, which is not shown again.
func (c *Client) APIKeyCreate(ctx context.Context, in APIKeyCreate) (*APIKeyWithSecret, error) {
	return send[APIKeyWithSecret](ctx, c, http.MethodPost, "/api/v1/api-keys", in)
}

// APIKeyGet gets a key (without the raw key).
func (c *Client) APIKeyGet(ctx context.Context, id string) (*APIKey, error) {
	return get[APIKey](ctx, c, "/api/v1/api-keys/"+pathEscape(id), nil)
}

// APIKeyRevoke revokes a key; it stops working at once.
func (c *Client) APIKeyRevoke(ctx context.Context, id string) (*APIKey, error) {
	return send[APIKey](ctx, c, http.MethodDelete, "/api/v1/api-keys/"+pathEscape(id), nil)
}

// APIKeyRotate issues a new raw key for a key; the old one stops working at once.
func (c *Client) APIKeyRotate(ctx context.Context, id string) (*APIKeyWithSecret, error) {
	return send[APIKeyWithSecret](ctx, c, http.MethodPost, "/api/v1/api-keys/"+pathEscape(id)+"/rotate", nil)
}
