package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/store"
)

type chatSessionCreateRequest struct {
	AgentID   string         `json:"agent_id" minLength:"1" pattern:"\\S"`
	Title     string         `json:"title,omitempty" maxLength:"200"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	EndUserID string         `json:"end_user_id,omitempty" maxLength:"200" doc:"Your own id for the end user the session is for; each message's run carries it."`
}

type chatSessionUpdateRequest struct {
	Title    *string         `json:"title,omitempty" maxLength:"200"`
	Metadata *map[string]any `json:"metadata,omitempty"`
}

// AssistantReply is the answer to a chat message.
type AssistantReply struct {
	ID            string            `json:"id"`
	Role          string            `json:"role" enum:"assistant"`
	Content       string            `json:"content"`
	ExecutionID   string            `json:"execution_id"`
	UserMessageID string            `json:"user_message_id"`
	TokenUsage    domain.TokenUsage `json:"token_usage"`
	CreatedAt     domain.Time       `json:"created_at"`
}

func (s *Server) chatRoutes() []route {
	const tag = "Chat"
	sess := v1 + "/chat/sessions/{id}"
	return []route{
		{method: "POST", path: v1 + "/chat/sessions", op: "createChatSession", tag: tag, scope: "chat:write", summary: "Start a chat session with an agent",
			body: chatSessionCreateRequest{}, resp: domain.ChatSession{}, status: http.StatusCreated, creates: true, h: s.createChatSession},
		{method: "GET", path: v1 + "/chat/sessions", op: "listChatSessions", tag: tag, scope: "sessions:read", summary: "List chat sessions, newest first", list: true,
			params: []param{{name: "agent_id", typ: "string"}, {name: "end_user_id", typ: "string", desc: "Only the sessions of this end user."}},
			resp:   domain.ChatSession{}, h: s.listChatSessions},
		{method: "GET", path: sess, op: "getChatSession", tag: tag, scope: "sessions:read", summary: "Get a chat session", resp: domain.ChatSession{}, h: byID(s, s.store.ChatSessionGet)},
		{method: "PATCH", path: sess, op: "updateChatSession", tag: tag, scope: "chat:write", summary: "Change a session's title or metadata",
			body: chatSessionUpdateRequest{}, resp: domain.ChatSession{}, h: s.updateChatSession},
		{method: "DELETE", path: sess, op: "deleteChatSession", tag: tag, scope: "chat:write", summary: "Delete a session and its messages",
			resp: domain.ChatSession{}, errs: []int{http.StatusConflict}, h: byID(s, s.store.ChatSessionDelete)},
		{method: "GET", path: sess + "/messages", op: "listChatMessages", tag: tag, scope: "sessions:read", summary: "A session's messages, oldest first", list: true,
			resp: domain.ChatMessage{}, h: childList(s, s.store.ChatMessageList)},
		{method: "POST", path: sess + "/messages", op: "sendChatMessage", tag: tag, scope: "chat:write", summary: "Send a message and wait for the reply",
			body: domain.ChatMessageRequest{}, resp: AssistantReply{}, alsoOK: map[int]any{http.StatusAccepted: domain.Execution{}}, errs: []int{http.StatusConflict, http.StatusBadGateway},
			creates: true, turn: true, plan: true, h: s.sendChatMessage},
		{method: "POST", path: sess + "/messages/stream", op: "streamChatMessage", tag: tag, scope: "chat:write", sse: true, summary: "Send a message and stream the reply (SSE)",
			params: []param{{name: "last_event_id", typ: "integer", desc: "Same as the Last-Event-ID header; read on a retry with an Idempotency-Key."}},
			body:   domain.ChatMessageRequest{}, errs: []int{http.StatusConflict}, creates: true, turn: true, plan: true, h: s.streamChatMessage},
	}
}

func (s *Server) createChatSession(w http.ResponseWriter, r *http.Request) error {
	var req chatSessionCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	// agent_id is not blank and end_user_id at most 200 characters: the document says so.
	ws := s.workspace(r)
	if err := s.store.CheckRefs(r.Context(), ws, domain.KindAgent, "agent_id", req.AgentID); err != nil {
		return err
	}
	c, err := s.store.ChatSessionCreate(r.Context(), &domain.ChatSession{WorkspaceID: ws, AgentID: req.AgentID, Title: req.Title, Metadata: req.Metadata,
		UserID: userIDOf(r), EndUserID: optString(req.EndUserID)})
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
	q := r.URL.Query()
	items, total, err := s.store.ChatSessionList(r.Context(), s.workspace(r), domain.ChatSessionFilter{AgentID: q.Get("agent_id"), EndUserID: q.Get("end_user_id")}, p)
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
	var p domain.ChatSessionPatch
	if req.Title != nil {
		p.Title = req.Title
	}
	if req.Metadata != nil {
		p.Metadata = ptr(domain.JSONObject(*req.Metadata))
	}
	c, err := s.store.ChatSessionUpdate(r.Context(), s.workspace(r), pathID(r, "id"), p)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, c)
	return nil
}

// chatTurn is the turn a chat message request stands for: started by this request, or, for a
// retry with the same Idempotency-Key, the one the first request started.
type chatTurn struct {
	ws            string
	executionID   string
	userMessageID string
	run           *runtime.Waiter // the run this request started; nil for a retry
	// from is the id of the last frame before this turn's (an answer resumes a run whose
	// earlier frames belong to the turn that asked); 0 for a new run.
	from int
}

func (t *chatTurn) replayed() bool { return t.run == nil }

// chatTurnFor starts the turn of a chat message, or finds the turn an earlier request with
// the same Idempotency-Key and body started. Looking before starting keeps a retry of a
// running turn clear of the busy session's 409 and of the plan limits its own turn counts in.
func (s *Server) chatTurnFor(w http.ResponseWriter, r *http.Request) (*chatTurn, error) {
	ws := s.workspace(r)
	key, hash, err := idempotencyRequest(w, r)
	if err != nil {
		return nil, err
	}
	if key != "" {
		prev, err := s.store.IdempotencyGet(r.Context(), ws, key)
		if err != nil {
			return nil, err
		}
		if prev != nil {
			return earlierTurn(ws, key, hash, prev)
		}
	}
	turn, err := s.startChatTurn(w, r, key, hash)
	var used *store.IdempotencyUsedError
	if errors.As(err, &used) {
		// A concurrent request with the key started the turn first.
		return earlierTurn(ws, key, hash, used.Record)
	}
	return turn, err
}

// earlierTurn is the turn an earlier request with key started; another request: 409.
func earlierTurn(ws, key, hash string, prev *domain.IdempotencyRecord) (*chatTurn, error) {
	ref, ok := prev.ChatTurn()
	if !ok || prev.RequestHash != hash {
		return nil, conflict("Idempotency-Key %q was already used with a different request body", key)
	}
	return &chatTurn{ws: ws, executionID: ref.ExecutionID, userMessageID: ref.UserMessageID}, nil
}

// startChatTurn validates a message and starts its run; the session is locked for it, and
// key (when set) is recorded for the turn in the same transaction.
func (s *Server) startChatTurn(w http.ResponseWriter, r *http.Request, key, hash string) (*chatTurn, error) {
	var req domain.ChatMessageRequest
	if err := decode(w, r, &req); err != nil {
		return nil, err
	}
	ws, id := s.workspace(r), pathID(r, "id")
	c, err := s.store.ChatSessionGet(r.Context(), ws, id) // a missing session is a 404 whatever the body
	if err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	endUser := c.EndUserID
	if req.EndUserID != "" {
		endUser = &req.EndUserID
	}
	a, err := s.store.AgentGet(r.Context(), ws, c.AgentID)
	if err != nil {
		return nil, conflict("the session's agent %s no longer exists", c.AgentID)
	}
	if a.Config == nil {
		return nil, conflict("agent %s has no active version", a.ID)
	}
	userMsgID := store.NewID()
	if c.ActiveExecutionID != nil {
		// A run of the session waiting for the answer to its question: this message answers it.
		// Its Idempotency-Key is recorded with the answer, as with a new turn.
		var claim func(ctx context.Context, tx *store.Store, x *domain.Execution) error
		if key != "" {
			claim = func(ctx context.Context, tx *store.Store, x *domain.Execution) error {
				return tx.ChatTurnClaim(ctx, ws, key, hash, domain.ChatTurnRef{ExecutionID: x.ID, UserMessageID: userMsgID})
			}
		}
		if turn, err := s.answerQuestion(r.Context(), ws, *c.ActiveExecutionID, userMsgID, req.Content, "chat", claim); turn != nil || err != nil {
			return turn, err
		}
	}
	x, done, err := s.engine.Submit(r.Context(), runtime.SubmitRequest{WorkspaceID: ws, Agent: a, VersionID: a.ActiveVersionID, Config: a.Config,
		Input: map[string]any{"message": req.Content}, Metadata: map[string]any{"session_id": id}, Source: "chat", TimeoutMS: defaultTimeoutMS,
		UserID: userIDOf(r), EndUserID: endUser,
		Chat: &runtime.ChatTurn{SessionID: id, UserMessageID: userMsgID, Content: req.Content, IdempotencyKey: key, RequestHash: hash},
		BeforeCreate: runtime.SQLHook(func(ctx context.Context, tx *store.Store, _ *domain.Execution) error {
			return s.checkExecutionLimits(ctx, tx, ws)
		})})
	if err != nil {
		return nil, err
	}
	return &chatTurn{ws: ws, executionID: x.ID, userMessageID: userMsgID, run: done}, nil
}

// answerQuestion resumes a session's run waiting for the answer to an ask_user question
// with content as the answer, stored as message msgID; nil, nil when the run waits for no
// question (a new message then finds the session busy, as before). by says who answered
// (chat, or the trigger's platform).
func (s *Server) answerQuestion(ctx context.Context, ws, execID, msgID, content, by string,
	before func(ctx context.Context, tx *store.Store, x *domain.Execution) error) (*chatTurn, error) {
	x, err := s.store.ExecutionGet(ctx, ws, execID)
	if err != nil || x.Status != domain.StatusAwaitingApproval {
		return nil, nil
	}
	a, err := s.store.ApprovalPending(ctx, ws, execID)
	if err != nil || a == nil || a.Kind != domain.ApprovalQuestion {
		return nil, err
	}
	// Every frame of the paused pass is stored with the pause: the answer's turn streams after them.
	last, err := s.store.EventLastSeq(ctx, execID)
	if err != nil {
		return nil, err
	}
	if x, err = s.engine.Decide(ctx, ws, execID, runtime.Review{Answer: content, DecidedBy: by, ChatMessageID: msgID, BeforeDecide: runtime.SQLHook(before)}); err != nil {
		return nil, err
	}
	run, ok := s.engine.Running(x.ID)
	if !ok {
		return nil, conflict("execution %s was answered but its run is not here; follow it with GET /executions/%s/stream", x.ID, x.ID)
	}
	return &chatTurn{ws: ws, executionID: x.ID, userMessageID: msgID, run: run, from: last}, nil
}

func (s *Server) sendChatMessage(w http.ResponseWriter, r *http.Request) error {
	turn, err := s.chatTurnFor(w, r)
	if err != nil {
		return err
	}
	var x *domain.Execution
	if turn.replayed() {
		w.Header().Set("Idempotent-Replayed", "true")
		x, err = s.engine.Await(r.Context(), turn.ws, turn.executionID)
		if x == nil && err == nil {
			return nil // the client left first
		}
	} else {
		select {
		case <-turn.run.Done():
		case <-r.Context().Done():
			return nil // the client left; the reply is still stored when it completes
		}
		x, err = s.store.ExecutionGet(context.WithoutCancel(r.Context()), turn.ws, turn.executionID)
	}
	if err != nil {
		return err
	}
	return s.writeChatReply(w, r, x, turn.userMessageID)
}

// writeChatReply answers a chat message from its execution once it stopped: the reply (200),
// the execution waiting at an approval checkpoint (202), or a 502 naming a failed run.
func (s *Server) writeChatReply(w http.ResponseWriter, r *http.Request, x *domain.Execution, userMsgID string) error {
	ctx := context.WithoutCancel(r.Context())
	switch x.Status {
	case domain.StatusCompleted:
		m, err := s.store.ChatReplyOf(ctx, x.WorkspaceID, x.ID)
		if err != nil {
			return err
		}
		writeData(w, http.StatusOK, AssistantReply{ID: m.ID, Role: m.Role, Content: m.Content, ExecutionID: x.ID,
			UserMessageID: userMsgID, TokenUsage: m.TokenUsage, CreatedAt: m.CreatedAt})
		return nil
	case domain.StatusAwaitingApproval:
		// An ask_user question is the turn's reply; the next message answers it.
		if a, err := s.store.ApprovalPending(ctx, x.WorkspaceID, x.ID); err != nil || a == nil || a.Kind != domain.ApprovalQuestion {
			writeData(w, http.StatusAccepted, x)
			return err
		}
		m, err := s.store.ChatReplyOf(ctx, x.WorkspaceID, x.ID)
		if err != nil {
			return err
		}
		writeData(w, http.StatusOK, AssistantReply{ID: m.ID, Role: m.Role, Content: m.Content, ExecutionID: x.ID,
			UserMessageID: userMsgID, TokenUsage: m.TokenUsage, CreatedAt: m.CreatedAt})
		return nil
	}
	msg := "the reply failed"
	if x.Error != nil {
		msg = *x.Error
	}
	return &Error{Status: http.StatusBadGateway, Code: "execution_failed", Message: "execution " + x.ID + " " + x.Status + ": " + msg}
}

func (s *Server) streamChatMessage(w http.ResponseWriter, r *http.Request) error {
	turn, err := s.chatTurnFor(w, r)
	if err != nil {
		return err
	}
	after := -1
	if turn.replayed() {
		// A retry resumes the turn's stream: after Last-Event-ID when sent, else from the start.
		if after, err = lastEventID(r); err != nil {
			return err
		}
		ended, err := s.pastEnd(r.Context(), turn.ws, turn.executionID, after)
		if err != nil {
			return err
		}
		if ended {
			w.WriteHeader(http.StatusNoContent)
			return nil
		}
		w.Header().Set("Idempotent-Replayed", "true")
	}
	sse := newSSE(w)
	sse.endAtPause = true
	if after < 0 {
		first, _ := json.Marshal(map[string]string{"execution_id": turn.executionID, "user_message_id": turn.userMessageID})
		if err := sse.frame(domain.Event{Seq: 0, Event: "execution", Data: first}); err != nil {
			return nil
		}
		after = turn.from
	}
	return s.streamKeyed(r, sse, turn.ws, turn.executionID, after)
}
