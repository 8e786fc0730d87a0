package client

import (
	"context"
	"net/http"
)

// ChatSessionCreate starts a session with an agent.
func (c *Client) ChatSessionCreate(ctx context.Context, agentID, title string, metadata map[string]any) (*ChatSession, error) {
	return send[ChatSession](ctx, c, http.MethodPost, "/api/v1/chat/sessions", map[string]any{"agent_id": agentID, "title": title, "metadata": metadata})
}

// ChatSessionStart creates a session with every field of the request (ChatSessionCreate
// is the short form).
func (c *Client) ChatSessionStart(ctx context.Context, in ChatSessionCreateRequest, opts ...RequestOption) (*ChatSession, error) {
	return send[ChatSession](ctx, c, http.MethodPost, "/api/v1/chat/sessions", in, opts...)
}

// ChatSessionList lists sessions, newest first (o.AgentID "" for all).
func (c *Client) ChatSessionList(ctx context.Context, o ListChatSessionsParams) (*List[ChatSession], error) {
	return list[ChatSession](ctx, c, "/api/v1/chat/sessions", query(o))
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
func (c *Client) ChatMessageList(ctx context.Context, sessionID string, o ListChatMessagesParams) (*List[ChatMessage], error) {
	return list[ChatMessage](ctx, c, "/api/v1/chat/sessions/"+pathEscape(sessionID)+"/messages", query(o))
}

// ChatSend sends a message and waits for the assistant's reply. With WithIdempotencyKey a
// retry (same key and content) makes no second turn: it waits for the first one and returns
// its reply.
func (c *Client) ChatSend(ctx context.Context, sessionID, content string, opts ...RequestOption) (*AssistantReply, error) {
	return send[AssistantReply](ctx, c, http.MethodPost, "/api/v1/chat/sessions/"+pathEscape(sessionID)+"/messages", map[string]string{"content": content}, opts...)
}
