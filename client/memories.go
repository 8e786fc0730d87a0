package client

import (
	"context"
	"net/http"
)

// MemoryList lists memories, newest first.
func (c *Client) MemoryList(ctx context.Context, o ListMemoriesParams) (*List[Memory], error) {
	return list[Memory](ctx, c, "/api/v1/memories", query(o))
}

// MemoryCreate stores a memory.
func (c *Client) MemoryCreate(ctx context.Context, in MemoryCreateRequest, opts ...RequestOption) (*Memory, error) {
	return send[Memory](ctx, c, http.MethodPost, "/api/v1/memories", in, opts...)
}

// MemoryGet gets a memory.
func (c *Client) MemoryGet(ctx context.Context, id string) (*Memory, error) {
	return get[Memory](ctx, c, "/api/v1/memories/"+pathEscape(id), nil)
}

// MemoryUpdate changes a memory's fields.
func (c *Client) MemoryUpdate(ctx context.Context, id string, in MemoryUpdateRequest) (*Memory, error) {
	return send[Memory](ctx, c, http.MethodPatch, "/api/v1/memories/"+pathEscape(id), in)
}

// MemoryDelete deletes a memory, returning it.
func (c *Client) MemoryDelete(ctx context.Context, id string) (*Memory, error) {
	return send[Memory](ctx, c, http.MethodDelete, "/api/v1/memories/"+pathEscape(id), nil)
}
