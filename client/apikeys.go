package client

import (
	"context"
	"net/http"
)

// APIKeyList lists the workspace's keys (never the raw keys). Needs a "*" key.
func (c *Client) APIKeyList(ctx context.Context, o ListAPIKeysParams) (*List[APIKey], error) {
	return list[APIKey](ctx, c, "/api/v1/api-keys", query(o))
}

// APIKeyCreate creates a key and returns it with the raw key, which is not shown again.
func (c *Client) APIKeyCreate(ctx context.Context, in APIKeyCreateRequest) (*APIKeyWithSecret, error) {
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
