package api

import (
	"context"
	"net/http"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// maxMemoryContentBytes bounds a memory's content, in bytes (the schema counts characters).
const maxMemoryContentBytes = 64 << 10

type memoryCreateRequest struct {
	AgentID   *string        `json:"agent_id,omitempty" doc:"The agent the memory belongs to; leave out for a workspace-wide memory."`
	SessionID *string        `json:"session_id,omitempty" doc:"The chat session the memory belongs to (runs with config.memory.scope session use it)."`
	EndUserID *string        `json:"end_user_id,omitempty" maxLength:"200" doc:"The end user the memory is about (runs with config.memory.scope end_user for that end_user_id use it)."`
	Key       string         `json:"key,omitempty" maxLength:"200" doc:"Optional lookup key."`
	Content   string         `json:"content" minLength:"1" pattern:"\\S" doc:"The memory itself; at most 64 KiB."`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

type memoryUpdateRequest struct {
	AgentID  *string         `json:"agent_id,omitempty" doc:"An empty string makes the memory workspace-wide."`
	Key      *string         `json:"key,omitempty" maxLength:"200"`
	Content  *string         `json:"content,omitempty" minLength:"1" pattern:"\\S"`
	Metadata *map[string]any `json:"metadata,omitempty" doc:"Replaces the whole object."`
}

func (s *Server) memoryRoutes() []route {
	const tag = "Memories"
	return []route{
		{method: "GET", path: v1 + "/memories", op: "listMemories", tag: tag, scope: "agents:read", summary: "List memories", list: true,
			params: []param{{name: "agent_id", typ: "string", desc: "Only memories of this agent."},
				{name: "session_id", typ: "string", desc: "Only memories of this chat session."},
				{name: "end_user_id", typ: "string", desc: "Only memories about this end user."},
				{name: "key", typ: "string", desc: "Only memories with exactly this key."},
				{name: "q", typ: "string", desc: "Case-insensitive substring of the key or content."}},
			resp: domain.Memory{}, h: s.listMemories},
		{method: "POST", path: v1 + "/memories", op: "createMemory", tag: tag, scope: "agents:write", summary: "Store a memory",
			body: memoryCreateRequest{}, resp: domain.Memory{}, status: http.StatusCreated, creates: true, h: s.createMemory},
		{method: "GET", path: v1 + "/memories/{id}", op: "getMemory", tag: tag, scope: "agents:read", summary: "Get a memory", resp: domain.Memory{}, h: byID(s, s.store.MemoryGet)},
		{method: "PATCH", path: v1 + "/memories/{id}", op: "updateMemory", tag: tag, scope: "agents:write", summary: "Update a memory",
			body: memoryUpdateRequest{}, resp: domain.Memory{}, h: s.updateMemory},
		{method: "DELETE", path: v1 + "/memories/{id}", op: "deleteMemory", tag: tag, scope: "agents:write", summary: "Delete a memory",
			resp: domain.Memory{}, h: byID(s, s.store.MemoryDelete)},
	}
}

func (s *Server) listMemories(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := domain.MemoryFilter{AgentID: q.Get("agent_id"), SessionID: q.Get("session_id"), EndUserID: q.Get("end_user_id"), Key: q.Get("key"), Query: q.Get("q")}
	items, total, err := s.store.MemoryList(r.Context(), s.workspace(r), f, p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}

// checkMemory validates the fields of a memory that are set (nil fields are left alone).
func (s *Server) checkMemory(ctx context.Context, ws string, agentID, key, content *string) error {
	if content != nil {
		if err := domain.NotBlank("content", *content); err != nil {
			return err
		}
		if len(*content) > maxMemoryContentBytes {
			return domain.Invalid("content", "must be at most %d bytes (64 KiB), got %d", maxMemoryContentBytes, len(*content))
		}
	}
	if key != nil {
	}
	if agentID != nil && *agentID != "" {
		return s.store.CheckRefs(ctx, ws, domain.KindAgent, "agent_id", *agentID)
	}
	return nil
}

func (s *Server) createMemory(w http.ResponseWriter, r *http.Request) error {
	var req memoryCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	ws := s.workspace(r)
	if err := s.checkMemory(r.Context(), ws, req.AgentID, &req.Key, &req.Content); err != nil {
		return err
	}
	if req.SessionID != nil && *req.SessionID != "" {
		if _, err := s.store.ChatSessionGet(r.Context(), ws, *req.SessionID); store.IsNotFound(err) {
			return &store.ReferenceError{Field: "session_id", Resource: "chat session", ID: *req.SessionID}
		} else if err != nil {
			return err
		}
	}
	if req.EndUserID != nil {
		if err := checkEndUser(*req.EndUserID); err != nil {
			return err
		}
	}
	m, err := s.store.MemoryCreate(r.Context(), &domain.Memory{WorkspaceID: ws, AgentID: req.AgentID, SessionID: req.SessionID,
		EndUserID: req.EndUserID, Key: req.Key, Content: req.Content, Metadata: domain.JSONObject(req.Metadata)})
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, m)
	return nil
}

func (s *Server) updateMemory(w http.ResponseWriter, r *http.Request) error {
	var req memoryUpdateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	ws := s.workspace(r)
	if err := s.checkMemory(r.Context(), ws, req.AgentID, req.Key, req.Content); err != nil {
		return err
	}
	p := domain.MemoryPatch{AgentID: req.AgentID, Key: req.Key, Content: req.Content}
	if req.Metadata != nil {
		p.Metadata = ptr(domain.JSONObject(*req.Metadata))
	}
	m, err := s.store.MemoryUpdate(r.Context(), ws, pathID(r, "id"), p)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, m)
	return nil
}
