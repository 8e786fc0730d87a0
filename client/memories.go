package client

import (
	"context"
	"net/http"
	"time"
)

// Memory is a piece of long-term knowledge of a workspace, or of one agent when AgentID is
// set.
type Memory struct {
	ID          string         `json:"id"`
	WorkspaceID string         `json:"workspace_id"`
	AgentID     *string        `json:"agent_id"`
	SessionID   *string        `json:"session_id"`
	EndUserID   *string        `json:"end_user_id"`
	Key         string         `json:"key"`
	Content     string         `json:"content"`
	Metadata    map[string]any `json:"metadata"`
	CreatedAt   time.Time      `json:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at"`
}

// MemoryCreate is the body of MemoryCreate.
type MemoryCreate struct {
	AgentID   *string        `json:"agent_id,omitempty"`
	SessionID *string        `json:"session_id,omitempty"`
	EndUserID *string        `json:"end_user_id,omitempty"`
	Key       string         `json:"key,omitempty"`
	Content   string         `json:"content"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// MemoryUpdate holds the fields to change; nil fields stay as they are. An empty AgentID
// makes the memory workspace-wide.
type MemoryUpdate struct {
	AgentID  *string         `json:"agent_id,omitempty"`
	Key      *string         `json:"key,omitempty"`
	Content  *string         `json:"content,omitempty"`
	Metadata *map[string]any `json:"metadata,omitempty"`
}

// MemoryListOptions filters MemoryList.
type MemoryListOptions struct {
	ListOptions
	AgentID   string
	SessionID string
	EndUserID string
	Key       string
	Query     string
}

// MemoryList lists memories, newest first.
func (c *Client) MemoryList(ctx context.Context, o MemoryListOptions) (*List[Memory], error) {
	q := o.values()
	setIf(q, "agent_id", o.AgentID)
	setIf(q, "session_id", o.SessionID)
	setIf(q, "end_user_id", o.EndUserID)
	setIf(q, "key", o.Key)
	setIf(q, "q", o.Query)
	return list[Memory](ctx, c, "/api/v1/memories", q)
}

// MemoryCreate stores a memory.
func (c *Client) MemoryCreate(ctx context.Context, in MemoryCreate, opts ...RequestOption) (*Memory, error) {
	return send[Memory](ctx, c, http.MethodPost, "/api/v1/memories", in, opts...)
}

// MemoryGet gets a memory.
func (c *Client) MemoryGet(ctx context.Context, id string) (*Memory, error) {
	return get[Memory](ctx, c, "/api/v1/memories/"+pathEscape(id), nil)
}

// MemoryUpdate changes a memory's fields.
func (c *Client) MemoryUpdate(ctx context.Context, id string, in MemoryUpdate) (*Memory, error) {
	return send[Memory](ctx, c, http.MethodPatch, "/api/v1/memories/"+pathEscape(id), in)
}

// MemoryDelete deletes a memory, returning it.
func (c *Client) MemoryDelete(ctx context.Context, id string) (*Memory, error) {
	return send[Memory](ctx, c, http.MethodDelete, "/api/v1/memories/"+pathEscape(id), nil)
}
