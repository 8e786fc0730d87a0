package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/store"
)

type chatSessionCreateRequest struct {
	AgentID  string         `json:"agent_id"`
	Title    string         `json:"title,omitempty" maxLength:"200"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

type chatSessionUpdateRequest struct {
	Title    *string         `json:"title,omitempty" maxLength:"200"`
	Metadata *map[string]any `json:"metadata,omitempty"`
}

type chatMessageRequest struct {
	Content string `json:"content" maxLength:"100000"`
}

// AssistantReply is the answer to a chat message.
type AssistantReply struct {
	ID            string           `json:"id"`
	Role          string           `json:"role" enum:"assistant"`
	Content       string           `json:"content"`
	ExecutionID   string           `json:"execution_id"`
	UserMessageID string           `json:"user_message_id"`
	TokenUsage    store.TokenUsage `json:"token_usage"`
	CreatedAt     store.Time       `json:"created_at"`
}

func (s *Server) chatRoutes() []route {
	const tag = "Chat"
	sess := v1 + "/chat/sessions/{id}"
	return []route{
		{method: "POST", path: v1 + "/chat/sessions", op: "createChatSession", tag: tag, scope: "chat:write", summary: "Start a chat session with an agent",
			body: chatSessionCreateRequest{}, resp: store.ChatSession{}, status: http.StatusCreated, creates: true, h: s.createChatSession},
		{method: "GET", path: v1 + "/chat/sessions", op: "listChatSessions", tag: tag, scope: "sessions:read", summary: "List chat sessions, newest first", list: true,
			params: []param{{name: "agent_id", typ: "string"}}, resp: store.ChatSession{}, h: s.listChatSessions},
		{method: "GET", path: sess, op: "getChatSession", tag: tag, scope: "sessions:read", summary: "Get a chat session", resp: store.ChatSession{}, h: byID(s, s.store.ChatSessionGet)},
		{method: "PATCH", path: sess, op: "updateChatSession", tag: tag, scope: "chat:write", summary: "Change a session's title or metadata",
			body: chatSessionUpdateRequest{}, resp: store.ChatSession{}, h: s.updateChatSession},
		{method: "DELETE", path: sess, op: "deleteChatSession", tag: tag, scope: "chat:write", summary: "Delete a session and its messages",
			resp: store.ChatSession{}, errs: []int{http.StatusConflict}, h: byID(s, s.store.ChatSessionDelete)},
		{method: "GET", path: sess + "/messages", op: "listChatMessages", tag: tag, scope: "sessions:read", summary: "A session's messages, oldest first", list: true,
			resp: store.ChatMessage{}, h: childList(s, s.store.ChatMessageList)},
		{method: "POST", path: sess + "/messages", op: "sendChatMessage", tag: tag, scope: "chat:write", summary: "Send a message and wait for the reply",
			desc: "Runs the agent (an execution with source chat) over the session's history and the message. The user message and the reply are stored together when the run completes. " +
				"A message while a reply is still running: 409. A failed run: 502 naming the execution. A run stopped at an approval checkpoint: 202 with the execution.",
			body: chatMessageRequest{}, resp: AssistantReply{}, alsoOK: map[int]any{http.StatusAccepted: store.Execution{}}, errs: []int{http.StatusConflict, http.StatusBadGateway}, plan: true, h: s.sendChatMessage},
		{method: "POST", path: sess + "/messages/stream", op: "streamChatMessage", tag: tag, scope: "chat:write", sse: true, summary: "Send a message and stream the reply (SSE)",
			desc: "Frames: `execution` {execution_id, user_message_id} first, then `thinking`, `tool_start`, `tool_end`, `content`, then exactly one `done` or `error`. " +
				"Reconnect with GET /executions/{execution_id}/stream and Last-Event-ID.",
			body: chatMessageRequest{}, errs: []int{http.StatusConflict}, plan: true, h: s.streamChatMessage},
	}
}

func (s *Server) createChatSession(w http.ResponseWriter, r *http.Request) error {
	var req chatSessionCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := firstErr(required("agent_id", req.AgentID), maxLen("title", req.Title, 200)); err != nil {
		return err
	}
	ws := s.workspace(r)
	if err := s.store.CheckRefs(r.Context(), ws, store.KindAgent, "agent_id", req.AgentID); err != nil {
		return err
	}
	c, err := s.store.ChatSessionCreate(r.Context(), &store.ChatSession{WorkspaceID: ws, AgentID: req.AgentID, Title: req.Title, Metadata: req.Metadata})
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, c)
	return nil
}

func (s *Server) listChatSessions(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	items, total, err := s.store.ChatSessionList(r.Context(), s.workspace(r), r.URL.Query().Get("agent_id"), p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}

func (s *Server) updateChatSession(w http.ResponseWriter, r *http.Request) error {
	var req chatSessionUpdateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	var p store.ChatSessionPatch
	if req.Title != nil {
		if err := maxLen("title", *req.Title, 200); err != nil {
			return err
		}
		p.Title = req.Title
	}
	if req.Metadata != nil {
		p.Metadata = ptr(store.JSONObject(*req.Metadata))
	}
	c, err := s.store.ChatSessionUpdate(r.Context(), s.workspace(r), pathID(r, "id"), p)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, c)
	return nil
}

// startChatTurn validates a message and starts its run; the session is locked for it.
func (s *Server) startChatTurn(w http.ResponseWriter, r *http.Request) (*store.Execution, *runtime.Waiter, string, error) {
	var req chatMessageRequest
	if err := decode(w, r, &req); err != nil {
		return nil, nil, "", err
	}
	ws, id := s.workspace(r), pathID(r, "id")
	c, err := s.store.ChatSessionGet(r.Context(), ws, id) // a missing session is a 404 whatever the body
	if err != nil {
		return nil, nil, "", err
	}
	if strings.TrimSpace(req.Content) == "" {
		return nil, nil, "", invalid("content", "is required and must not be empty")
	}
	if err := maxLen("content", req.Content, 100_000); err != nil {
		return nil, nil, "", err
	}
	a, err := s.store.AgentGet(r.Context(), ws, c.AgentID)
	if err != nil {
		return nil, nil, "", conflict("the session's agent %s no longer exists", c.AgentID)
	}
	if a.Config == nil {
		return nil, nil, "", conflict("agent %s has no active version", a.ID)
	}
	if err := s.checkExecutionLimits(r.Context(), ws); err != nil {
		return nil, nil, "", err
	}
	userMsgID := store.NewID()
	x, done, err := s.engine.Submit(r.Context(), runtime.SubmitRequest{WorkspaceID: ws, Agent: a, VersionID: a.ActiveVersionID, Config: a.Config,
		Input: map[string]any{"message": req.Content}, Metadata: map[string]any{"session_id": id}, Source: "chat", TimeoutMS: defaultTimeoutMS,
		Chat: &runtime.ChatTurn{SessionID: id, UserMessageID: userMsgID, Content: req.Content}})
	return x, done, userMsgID, err
}

func (s *Server) sendChatMessage(w http.ResponseWriter, r *http.Request) error {
	x, run, userMsgID, err := s.startChatTurn(w, r)
	if err != nil {
		return err
	}
	select {
	case <-run.Done():
	case <-r.Context().Done():
		return nil // the client left; the reply is still stored when it completes
	}
	ctx := context.WithoutCancel(r.Context())
	x, err = s.store.ExecutionGet(ctx, x.WorkspaceID, x.ID)
	if err != nil {
		return err
	}
	switch x.Status {
	case store.StatusCompleted:
		m, err := s.store.ChatReplyOf(ctx, x.WorkspaceID, x.ID)
		if err != nil {
			return err
		}
		writeData(w, http.StatusOK, AssistantReply{ID: m.ID, Role: m.Role, Content: m.Content, ExecutionID: x.ID,
			UserMessageID: userMsgID, TokenUsage: m.TokenUsage, CreatedAt: m.CreatedAt})
		return nil
	case store.StatusAwaitingApproval:
		writeData(w, http.StatusAccepted, x)
		return nil
	}
	msg := "the reply failed"
	if x.Error != nil {
		msg = *x.Error
	}
	return &Error{Status: http.StatusBadGateway, Code: "execution_failed", Message: "execution " + x.ID + " " + x.Status + ": " + msg}
}

func (s *Server) streamChatMessage(w http.ResponseWriter, r *http.Request) error {
	x, _, userMsgID, err := s.startChatTurn(w, r)
	if err != nil {
		return err
	}
	sse := newSSE(w)
	first, _ := json.Marshal(map[string]string{"execution_id": x.ID, "user_message_id": userMsgID})
	if err := sse.frame(store.Event{Seq: 0, Event: "execution", Data: first}); err != nil {
		return nil
	}
	return s.streamExecution(r.Context(), sse, x.WorkspaceID, x.ID, 0)
}
