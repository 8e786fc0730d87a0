package client

import (
	"context"
	"net/http"
	"time"
)

// ChatSession is a conversation with an agent.
type ChatSession struct {
	ID                string         `json:"id"`
	WorkspaceID       string         `json:"workspace_id"`
	AgentID           string         `json:"agent_id"`
	Title             string         `json:"title"`
	Metadata          map[string]any `json:"metadata"`
	UserID            *string        `json:"user_id"`
	EndUserID         *string        `json:"end_user_id"`
	MessageCount      int            `json:"message_count"`
	ActiveExecutionID *string        `json:"active_execution_id"`
	LastMessageAt     *time.Time     `json:"last_message_at"`
	CreatedAt         time.Time      `json:"created_at"`
	UpdatedAt         time.Time      `json:"updated_at"`
}

// ChatMessage is one message of a session.
type ChatMessage struct {
	ID            string     `json:"id"`
	SessionID     string     `json:"session_id"`
	Role          string     `json:"role"`
	Content       string     `json:"content"`
	ExecutionID   *string    `json:"execution_id"`
	UserMessageID *string    `json:"user_message_id"`
	TokenUsage    TokenUsage `json:"token_usage"`
	CreatedAt     time.Time  `json:"created_at"`
}

// AssistantReply is the answer to a chat message.
type AssistantReply struct {
	ID            string     `json:"id"`
	Role          string     `json:"role"`
	Content       string     `json:"content"`
	ExecutionID   string     `json:"execution_id"`
	UserMessageID string     `json:"user_message_id"`
	TokenUsage    TokenUsage `json:"token_usage"`
	CreatedAt     time.Time  `json:"created_at"`
}

// ChatSessionCreate starts a session with an agent.
func (c *Client) ChatSessionCreate(ctx context.Context, agentID, title string, metadata map[string]any) (*ChatSession, error) {
	return send[ChatSession](ctx, c, http.MethodPost, "/api/v1/chat/sessions", map[string]any{"agent_id": agentID, "title": title, "metadata": metadata})
}

// ChatSessionStart is the body of ChatSessionStart.
type ChatSessionStart struct {
	AgentID   string         `json:"agent_id"`
	Title     string         `json:"title,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	EndUserID string         `json:"end_user_id,omitempty"`
}

// ChatSessionStart creates a session with every field of the request (ChatSessionCreate
// is the short form).
func (c *Client) ChatSessionStart(ctx context.Context, in ChatSessionStart, opts ...RequestOption) (*ChatSession, error) {
	return send[ChatSession](ctx, c, http.MethodPost, "/api/v1/chat/sessions", in, opts...)
}

// ChatSessionList lists sessions, newest first (agentID "" for all).
func (c *Client) ChatSessionList(ctx context.Context, agentID string, o ListOptions) (*List[ChatSession], error) {
	q := o.values()
	setIf(q, "agent_id", agentID)
	return list[ChatSession](ctx, c, "/api/v1/chat/sessions", q)
}

// ChatSessionGet gets a session.
func (c *Client) ChatSessionGet(ctx context.Context, id string) (*ChatSession, error) {
	return get[ChatSession](ctx, c, "/api/v1/chat/sessions/"+pathEscape(id), nil)
}

// ChatSessionUpdate changes a session's title and/or metadata (nil leaves them).
func (c *Client) ChatSessionUpdate(ctx context.Context, id string, title *string, metadata map[string]any) (*ChatSession, error) {
	body := map[string]any{}
	if title != nil {
		body["title"] = *title
	}
	if metadata != nil {
		body["metadata"] = metadata
	}
	return send[ChatSession](ctx, c, http.MethodPatch, "/api/v1/chat/sessions/"+pathEscape(id), body)
}

// ChatSessionDelete deletes a session and its messages.
func (c *Client) ChatSessionDelete(ctx context.Context, id string) (*ChatSession, error) {
	return send[ChatSession](ctx, c, http.MethodDelete, "/api/v1/chat/sessions/"+pathEscape(id), nil)
}

// ChatMessageList lists a session's messages, oldest first.
func (c *Client) ChatMessageList(ctx context.Context, sessionID string, o ListOptions) (*List[ChatMessage], error) {
	return list[ChatMessage](ctx, c, "/api/v1/chat/sessions/"+pathEscape(sessionID)+"/messages", o.values())
}

// ChatSend sends a message and waits for the assistant's reply. With WithIdempotencyKey a
// retry (same key and content) makes no second turn: it waits for the first one and returns
// its reply.
func (c *Client) ChatSend(ctx context.Context, sessionID, content string, opts ...RequestOption) (*AssistantReply, error) {
	return send[AssistantReply](ctx, c, http.MethodPost, "/api/v1/chat/sessions/"+pathEscape(sessionID)+"/messages", map[string]string{"content": content}, opts...)
}
