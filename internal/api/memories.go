package api

import (
	"context"
	"net/http"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

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
			body: domain.MemoryCreateRequest{}, resp: domain.Memory{}, status: http.StatusCreated, creates: true, h: s.createMemory},
		{method: "GET", path: v1 + "/memories/{id}", op: "getMemory", tag: tag, scope: "agents:read", summary: "Get a memory", resp: domain.Memory{}, h: byID(s, s.store.MemoryGet)},
		{method: "PATCH", path: v1 + "/memories/{id}", op: "updateMemory", tag: tag, scope: "agents:write", summary: "Update a memory",
			body: domain.MemoryUpdateRequest{}, resp: domain.Memory{}, h: s.updateMemory},
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

// checkMemoryAgent checks that a memory's new agent, when one is named, is the workspace's.
func (s *Server) checkMemoryAgent(ctx context.Context, ws string, agentID *string) error {
	if agentID != nil && *agentID != "" {
		return s.store.CheckRefs(ctx, ws, domain.KindAgent, "agent_id", *agentID)
	}
	return nil
}

func (s *Server) createMemory(w http.ResponseWriter, r *http.Request) error {
	var req domain.MemoryCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	ws := s.workspace(r)
	if err := s.checkMemoryAgent(r.Context(), ws, req.AgentID); err != nil {
		return err
	}
	if req.SessionID != nil && *req.SessionID != "" {
		if _, err := s.store.ChatSessionGet(r.Context(), ws, *req.SessionID); store.IsNotFound(err) {
			return &store.ReferenceError{Field: "session_id", Resource: "chat session", ID: *req.SessionID}
		} else if err != nil {
			return err
		}
	}
	// end_user_id is at most 200 characters: the document says so.
	m, err := s.store.MemoryCreate(r.Context(), &domain.Memory{WorkspaceID: ws, AgentID: req.AgentID, SessionID: req.SessionID,
		EndUserID: req.EndUserID, Key: req.Key, Content: req.Content, Metadata: domain.JSONObject(req.Metadata)})
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, m)
	return nil
}

func (s *Server) updateMemory(w http.ResponseWriter, r *http.Request) error {
	var req domain.MemoryUpdateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	ws := s.workspace(r)
	if err := s.checkMemoryAgent(r.Context(), ws, req.AgentID); err != nil {
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
