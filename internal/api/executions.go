package api

import (
	"context"
	"net/http"
	"time"

	"github.com/agentplane/agentplane/internal/agentconfig"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/store"
)

const (
	defaultTimeoutMS = 300_000
	maxTimeoutMS     = 3_600_000
)

type executeRequest struct {
	Input     map[string]any `json:"input" doc:"Validated against the version's input_schema before anything is recorded."`
	Metadata  map[string]any `json:"metadata,omitempty"`
	Async     bool           `json:"async,omitempty" doc:"Queue the run and answer 202 at once (default false: wait for the result)."`
	VersionID string         `json:"version_id,omitempty" doc:"Run this version instead of the active one."`
	TimeoutMS int            `json:"timeout_ms,omitempty" minimum:"1" maximum:"3600000" doc:"How long a sync call waits (default 300000); still running then: 202."`
}

type playgroundRequest struct {
	Config    store.AgentConfig `json:"config" doc:"An unsaved configuration to run."`
	Input     map[string]any    `json:"input"`
	Metadata  map[string]any    `json:"metadata,omitempty"`
	Async     bool              `json:"async,omitempty"`
	TimeoutMS int               `json:"timeout_ms,omitempty" minimum:"1" maximum:"3600000"`
}

type approveRequest struct {
	Comment string `json:"comment,omitempty" maxLength:"2000"`
}

type denyRequest struct {
	Reason string `json:"reason,omitempty" maxLength:"2000"`
}

func (s *Server) executionRoutes() []route {
	const tag = "Executions"
	id := v1 + "/executions/{id}"
	return []route{
		{method: "POST", path: v1 + "/agents/{id}/execute", op: "executeAgent", tag: "Agents", scope: "agents:execute", summary: "Run an agent",
			desc: "Sync (default): waits for the run (up to timeout_ms) and answers 200 with the finished execution, or 202 if it is still running or awaiting approval. " +
				"Async: answers 202 at once with the pending execution. Input failing the version's input_schema is a 422 and records nothing.",
			body: executeRequest{}, resp: store.Execution{}, creates: true, alsoOK: map[int]any{http.StatusAccepted: nil}, errs: []int{http.StatusConflict}, plan: true, h: s.execute},
		{method: "POST", path: v1 + "/agents/{id}/playground", op: "playgroundAgent", tag: "Agents", scope: "agents:execute", summary: "Run an unsaved configuration",
			desc: "Like execute, for a config that is not saved as a version; recorded with source and metadata.source \"playground\".",
			body: playgroundRequest{}, resp: store.Execution{}, creates: true, alsoOK: map[int]any{http.StatusAccepted: nil}, plan: true, h: s.playground},
		{method: "GET", path: v1 + "/executions", op: "listExecutions", tag: tag, scope: "executions:read", summary: "List executions, newest first", list: true,
			params: []param{{name: "agent_id", typ: "string"}, {name: "status", typ: "string", enum: store.ExecutionStatuses},
				{name: "session_id", typ: "string"}, {name: "source", typ: "string"},
				{name: "created_after", typ: "string", desc: "RFC 3339 time."}, {name: "created_before", typ: "string", desc: "RFC 3339 time."}},
			resp: store.Execution{}, h: s.listExecutions},
		{method: "GET", path: id, op: "getExecution", tag: tag, scope: "executions:read", summary: "Get an execution", resp: store.Execution{}, h: byID(s, s.store.ExecutionGet)},
		{method: "GET", path: id + "/tree", op: "getExecutionTree", tag: tag, scope: "executions:read", summary: "An execution with its nested child executions",
			resp: store.ExecutionNode{}, h: byID(s, s.store.ExecutionTree)},
		{method: "GET", path: id + "/stream", op: "streamExecution", tag: tag, scope: "executions:read", sse: true, summary: "Stream an execution's events (SSE)",
			desc: "Frames `thinking`, `tool_start`, `tool_end`, `content`, then one `done` or `error`; each has an `id:` (per-execution sequence). " +
				"A finished execution sends its terminal frame and closes; a live one sends frames from now on. With Last-Event-ID, every frame after that id is replayed first, none twice. " +
				"A `: ping` comment comes every 15 s. Disconnecting does not cancel the run.",
			params: []param{{name: "last_event_id", typ: "integer", desc: "Same as the Last-Event-ID header."}}, errs: []int{http.StatusBadRequest}, h: s.streamExecutionRoute},
		{method: "POST", path: id + "/cancel", op: "cancelExecution", tag: tag, scope: "executions:write", summary: "Cancel a pending, running or awaiting execution",
			resp: store.Execution{}, errs: []int{http.StatusConflict}, h: s.cancelExecution},
		{method: "POST", path: id + "/approve", op: "approveExecution", tag: tag, scope: "executions:write", summary: "Approve an execution awaiting approval; it resumes",
			body: approveRequest{}, resp: store.Execution{}, errs: []int{http.StatusConflict}, h: s.approveExecution},
		{method: "POST", path: id + "/deny", op: "denyExecution", tag: tag, scope: "executions:write", summary: "Deny an execution awaiting approval; it ends rejected",
			body: denyRequest{}, resp: store.Execution{}, errs: []int{http.StatusConflict}, h: s.denyExecution},
		{method: "GET", path: v1 + "/approvals", op: "listApprovals", tag: tag, scope: "executions:read", summary: "The approval inbox, newest first", list: true,
			params: []param{{name: "status", typ: "string", enum: []string{"pending", "approved", "denied", "cancelled", "all"}, desc: "Default pending."}},
			resp:   store.Approval{}, h: s.listApprovals},
		{method: "GET", path: v1 + "/approvals/{id}", op: "getApproval", tag: tag, scope: "executions:read", summary: "Get an approval", resp: store.Approval{}, h: byID(s, s.store.ApprovalGet)},
	}
}

func checkTimeout(ms int) (int, error) {
	if ms == 0 {
		return defaultTimeoutMS, nil
	}
	if ms < 1 || ms > maxTimeoutMS {
		return 0, invalid("timeout_ms", "must be between 1 and %d", maxTimeoutMS)
	}
	return ms, nil
}

func (s *Server) execute(w http.ResponseWriter, r *http.Request) error {
	var req executeRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	ws := s.workspace(r)
	a, err := s.store.AgentGet(r.Context(), ws, pathID(r, "id"))
	if err != nil {
		return err
	}
	timeout, err := checkTimeout(req.TimeoutMS)
	if err != nil {
		return err
	}
	cfg, versionID := a.Config, a.ActiveVersionID
	if req.VersionID != "" {
		v, err := s.store.AgentVersionGet(r.Context(), ws, a.ID, req.VersionID)
		if err != nil {
			return err
		}
		cfg, versionID = &v.Config, &v.ID
	}
	if cfg == nil {
		return conflict("agent %s has no active version; create and promote one first", a.ID)
	}
	if req.Input == nil {
		req.Input = map[string]any{}
	}
	if err := validateInput(cfg, req.Input); err != nil {
		return err
	}
	return s.submit(w, r, runtime.SubmitRequest{WorkspaceID: ws, Agent: a, VersionID: versionID, Config: cfg, Input: req.Input,
		Metadata: req.Metadata, Source: "api", TimeoutMS: timeout, Async: req.Async})
}

func (s *Server) playground(w http.ResponseWriter, r *http.Request) error {
	var req playgroundRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	ws := s.workspace(r)
	a, err := s.store.AgentGet(r.Context(), ws, pathID(r, "id"))
	if err != nil {
		return err
	}
	timeout, err := checkTimeout(req.TimeoutMS)
	if err != nil {
		return err
	}
	if err := agentconfig.Validate(r.Context(), s.store, ws, a.Type, a.ID, &req.Config); err != nil {
		return err
	}
	if req.Input == nil {
		req.Input = map[string]any{}
	}
	if err := validateInput(&req.Config, req.Input); err != nil {
		return err
	}
	md := req.Metadata
	if md == nil {
		md = map[string]any{}
	}
	md["source"] = "playground"
	return s.submit(w, r, runtime.SubmitRequest{WorkspaceID: ws, Agent: a, Config: &req.Config, Input: req.Input,
		Metadata: md, Source: "playground", TimeoutMS: timeout, Async: req.Async})
}

// submit starts a run and answers: 202 at once for async, else waits up to its timeout.
func (s *Server) submit(w http.ResponseWriter, r *http.Request, req runtime.SubmitRequest) error {
	if err := s.checkExecutionLimits(r.Context(), req.WorkspaceID); err != nil {
		return err
	}
	x, run, err := s.engine.Submit(r.Context(), req)
	if err != nil {
		return err
	}
	if run == nil {
		writeData(w, http.StatusAccepted, x)
		return nil
	}
	timer := time.NewTimer(time.Duration(req.TimeoutMS) * time.Millisecond)
	defer timer.Stop()
	var final *store.Execution
	select {
	case <-run.Done():
		final = run.Result()
	case <-timer.C:
	case <-r.Context().Done():
		return nil // the client left; the run goes on
	}
	if final == nil {
		if final, err = s.store.ExecutionGet(context.WithoutCancel(r.Context()), req.WorkspaceID, x.ID); err != nil {
			return err
		}
	}
	x = final
	status := http.StatusOK
	if !store.IsTerminal(x.Status) {
		status = http.StatusAccepted
	}
	writeData(w, status, x)
	return nil
}

func (s *Server) listExecutions(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := store.ExecutionFilter{AgentID: q.Get("agent_id"), Status: q.Get("status"), SessionID: q.Get("session_id"), Source: q.Get("source")}
	if f.Status != "" {
		if err := oneOf("status", f.Status, store.ExecutionStatuses); err != nil {
			return badRequest("%s", err.Error())
		}
	}
	for name, dst := range map[string]*store.Time{"created_after": &f.CreatedAfter, "created_before": &f.CreatedBefore} {
		if v := q.Get(name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return badRequest("%s must be an RFC 3339 time such as 2026-01-02T15:04:05Z, got %q", name, v)
			}
			*dst = store.Time{Time: t.UTC()}
		}
	}
	items, total, err := s.store.ExecutionList(r.Context(), s.workspace(r), f, p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}

func (s *Server) streamExecutionRoute(w http.ResponseWriter, r *http.Request) error {
	after, err := lastEventID(r)
	if err != nil {
		return err
	}
	ws, id := s.workspace(r), pathID(r, "id")
	// A run live in this process is known without the store (its workspace is checked the
	// same); keeping the store out of a stream's path keeps each stream small.
	if sub, live := s.engine.Subscribe(id); !live || sub.Workspace() != ws {
		if live {
			sub.Close()
		}
		if _, err := s.store.ExecutionGet(r.Context(), ws, id); err != nil {
			return err
		}
	} else {
		sub.Close()
	}
	return s.streamExecution(r.Context(), newSSE(w), ws, id, after)
}

func (s *Server) cancelExecution(w http.ResponseWriter, r *http.Request) error {
	x, err := s.engine.Cancel(r.Context(), s.workspace(r), pathID(r, "id"))
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, x)
	return nil
}

func (s *Server) approveExecution(w http.ResponseWriter, r *http.Request) error {
	var req approveRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := maxLen("comment", req.Comment, 2000); err != nil {
		return err
	}
	x, err := s.engine.Approve(r.Context(), s.workspace(r), pathID(r, "id"), req.Comment)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, x)
	return nil
}

func (s *Server) denyExecution(w http.ResponseWriter, r *http.Request) error {
	var req denyRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := maxLen("reason", req.Reason, 2000); err != nil {
		return err
	}
	x, err := s.engine.Deny(r.Context(), s.workspace(r), pathID(r, "id"), req.Reason)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, x)
	return nil
}

func (s *Server) listApprovals(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	status := r.URL.Query().Get("status")
	switch status {
	case "":
		status = "pending"
	case "all":
		status = ""
	default:
		if err := oneOf("status", status, []string{"pending", "approved", "denied", "cancelled", "all"}); err != nil {
			return badRequest("%s", err.Error())
		}
	}
	items, total, err := s.store.ApprovalList(r.Context(), s.workspace(r), status, p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}
