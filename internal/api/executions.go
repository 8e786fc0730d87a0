package api

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/agentconfig"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/store"
)

// defaultTimeoutMS is how long a sync execute waits when timeout_ms is left out.
const defaultTimeoutMS = 300_000

type executeRequest struct {
	Input     map[string]any `json:"input" doc:"Validated against the version's input_schema before anything is recorded; required when the version has one."`
	EndUserID string         `json:"end_user_id,omitempty" maxLength:"200" doc:"Your own id for the end user the run is for (filter GET /executions by it)."`
	Metadata  map[string]any `json:"metadata,omitempty"`
	Async     bool           `json:"async,omitempty" doc:"Queue the run and answer 202 at once (default false: wait for the result)."`
	VersionID string         `json:"version_id,omitempty" doc:"Run this version instead of the active one."`
	TimeoutMS int            `json:"timeout_ms,omitempty" minimum:"1" maximum:"3600000" doc:"How long a sync call waits (default 300000); still running then: 202."`
	Source    string         `json:"source,omitempty" enum:"api,studio" doc:"What the execution records as its source: api (the default) or studio (runs started from Studio, /studio)."`
}

type playgroundRequest struct {
	Config    domain.AgentConfig `json:"config" doc:"An unsaved configuration to run."`
	Input     map[string]any     `json:"input"`
	EndUserID string             `json:"end_user_id,omitempty" maxLength:"200" doc:"Your own id for the end user the run is for."`
	Metadata  map[string]any     `json:"metadata,omitempty"`
	Async     bool               `json:"async,omitempty"`
	TimeoutMS int                `json:"timeout_ms,omitempty" minimum:"1" maximum:"3600000"`
	Source    string             `json:"source,omitempty" enum:"playground,studio" doc:"What the execution records as its source: playground (the default) or studio (draft runs from Studio's playground); metadata.source stays playground."`
}

type approveRequest struct {
	Comment string `json:"comment,omitempty" maxLength:"2000"`
	// Decisions decide pending tool calls one by one (approval kind tools).
	Decisions []runtime.CallDecision `json:"decisions,omitempty" maxItems:"128" doc:"Per pending tool call (see the approval's calls): approve, reject with a message the model reads as the call's result, or edit with new arguments (checked against the tool's input schema, 422 otherwise). A pending call without a decision is approved."`
	Answer    string                 `json:"answer,omitempty" maxLength:"20000" doc:"The answer to the question of an approval of kind question (required for it); the agent's ask_user call returns it."`
}

type denyRequest struct {
	Reason string `json:"reason,omitempty" maxLength:"2000"`
}

func (s *Server) executionRoutes() []route {
	const tag = "Executions"
	id := v1 + "/executions/{id}"
	return []route{
		{method: "POST", path: v1 + "/agents/{id}/execute", op: "executeAgent", tag: "Agents", scope: "agents:execute", summary: "Run an agent",
			body: executeRequest{}, resp: domain.Execution{}, creates: true, alsoOK: map[int]any{http.StatusAccepted: nil}, errs: []int{http.StatusConflict}, plan: true, h: s.execute},
		{method: "POST", path: v1 + "/agents/{id}/playground", op: "playgroundAgent", tag: "Agents", scope: "agents:execute", summary: "Run an unsaved configuration",
			body: playgroundRequest{}, resp: domain.Execution{}, creates: true, alsoOK: map[int]any{http.StatusAccepted: nil}, plan: true, h: s.playground},
		{method: "GET", path: v1 + "/executions", op: "listExecutions", tag: tag, scope: "executions:read", summary: "List executions, newest first", list: true,
			params: []param{{name: "agent_id", typ: "string"}, {name: "status", typ: "string", enum: domain.ExecutionStatuses},
				{name: "session_id", typ: "string"}, {name: "source", typ: "string"}, {name: "end_user_id", typ: "string", desc: "Only the runs of this end user."},
				{name: "experiment_id", typ: "string", desc: "Only the runs of this experiment's items (with those interrupted and run again)."},
				{name: "created_after", typ: "string", desc: "RFC 3339 time."}, {name: "created_before", typ: "string", desc: "RFC 3339 time."}},
			resp: domain.Execution{}, h: s.listExecutions},
		{method: "GET", path: id, op: "getExecution", tag: tag, scope: "executions:read", summary: "Get an execution", resp: domain.Execution{}, h: byID(s, s.store.ExecutionGet)},
		{method: "GET", path: id + "/tree", op: "getExecutionTree", tag: tag, scope: "executions:read", summary: "An execution with its nested child executions",
			resp: domain.ExecutionNode{}, h: byID(s, s.store.ExecutionTree)},
		{method: "GET", path: id + "/stream", op: "streamExecution", tag: tag, scope: "executions:read", sse: true, summary: "Stream an execution's events (SSE)",
			params: []param{{name: "last_event_id", typ: "integer", desc: "Same as the Last-Event-ID header."}}, errs: []int{http.StatusBadRequest}, h: s.streamExecutionRoute},
		{method: "POST", path: id + "/cancel", op: "cancelExecution", tag: tag, scope: "executions:read", summary: "Cancel a pending, running or awaiting execution",
			resp: domain.Execution{}, errs: []int{http.StatusConflict}, h: s.cancelExecution},
		{method: "POST", path: id + "/approve", op: "approveExecution", tag: tag, scope: "executions:read", summary: "Approve an execution awaiting approval; it resumes",
			body: approveRequest{}, resp: domain.Execution{}, errs: []int{http.StatusConflict, http.StatusUnprocessableEntity}, h: s.approveExecution},
		{method: "POST", path: id + "/deny", op: "denyExecution", tag: tag, scope: "executions:read", summary: "Deny an execution awaiting approval; it ends rejected",
			body: denyRequest{}, resp: domain.Execution{}, errs: []int{http.StatusConflict}, h: s.denyExecution},
		{method: "GET", path: v1 + "/approvals", op: "listApprovals", tag: tag, scope: "executions:read", summary: "The approval inbox, newest first", list: true,
			params: []param{{name: "status", typ: "string", enum: []string{"pending", "approved", "denied", "cancelled", "all"}, desc: "Default pending."},
				{name: "execution_id", typ: "string", desc: "Only the approvals of this execution."}},
			resp: domain.Approval{}, h: s.listApprovals},
		{method: "GET", path: v1 + "/approvals/{id}", op: "getApproval", tag: tag, scope: "executions:read", summary: "Get an approval", resp: domain.Approval{}, h: byID(s, s.store.ApprovalGet)},
	}
}

// requireInput validates a run's input against the config's input_schema. A missing (or
// null) input is a 422 naming input when there is a schema, rather than an empty object
// that the schema may happen to accept; without a schema it is an empty object.
func requireInput(cfg *domain.AgentConfig, input map[string]any) (map[string]any, error) {
	if input == nil {
		if hasSchema(cfg.InputSchema) {
			return nil, domain.Invalid("input", "is required: the version has an input_schema")
		}
		input = map[string]any{}
	}
	return input, cfg.CheckInput(input)
}

// hasSchema reports whether a schema field is set (not absent, not null).
func hasSchema(raw json.RawMessage) bool {
	t := strings.TrimSpace(string(raw))
	return t != "" && t != "null"
}

// userIDOf is the signed-in user of a bearer-token request, or nil.
func userIDOf(r *http.Request) *string {
	if u := userOf(r); u != nil {
		return &u.id
	}
	return nil
}

// decidedBy names who sends a decision, for the approval record: the logged-in user, or the
// API key (never its secret).
func decidedBy(r *http.Request) string {
	if u := userOf(r); u != nil {
		return "user:" + u.id
	}
	if k := apiKeyOf(r); k != nil {
		return "api_key:" + k.ID
	}
	return ""
}

// optString is nil for "", else a pointer to s.
func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// runSource is the source a caller may set on execute or playground: the route's default
// ("api" or "playground") when none is given. The document allows only that default or
// "studio", so that runs started from Studio are told apart; the other sources (webhook,
// schedule, chat, …) are set by the server only.
func runSource(source, def string) string {
	if source == "" {
		return def
	}
	return source
}

// runTimeout is how long a sync call waits: timeout_ms (1 to 3600000, as the document says),
// or the default when it is left out.
func runTimeout(ms int) int {
	if ms == 0 {
		return defaultTimeoutMS
	}
	return ms
}

func (s *Server) execute(w http.ResponseWriter, r *http.Request) error {
	var req executeRequest
	body, err := decodeKeep(w, r, &req)
	if err != nil {
		return err
	}
	if err := checkStrayInput(body, req.Input, reflect.TypeFor[executeRequest]()); err != nil {
		return err
	}
	ws := s.workspace(r)
	a, err := s.store.AgentGet(r.Context(), ws, pathID(r, "id"))
	if err != nil {
		return err
	}
	timeout := runTimeout(req.TimeoutMS)
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
	if req.Input, err = requireInput(cfg, req.Input); err != nil {
		return err
	}
	source := runSource(req.Source, "api")
	return s.submit(w, r, runtime.SubmitRequest{WorkspaceID: ws, Agent: a, VersionID: versionID, Config: cfg, Input: req.Input,
		Metadata: req.Metadata, Source: source, TimeoutMS: timeout, Async: req.Async, UserID: userIDOf(r), EndUserID: optString(req.EndUserID)})
}

func (s *Server) playground(w http.ResponseWriter, r *http.Request) error {
	var req playgroundRequest
	body, err := decodeKeep(w, r, &req)
	if err != nil {
		return err
	}
	if err := checkConfigKeys(body, "config"); err != nil {
		return err
	}
	if err := checkStrayInput(body, req.Input, reflect.TypeFor[playgroundRequest]()); err != nil {
		return err
	}
	ws := s.workspace(r)
	a, err := s.store.AgentGet(r.Context(), ws, pathID(r, "id"))
	if err != nil {
		return err
	}
	timeout := runTimeout(req.TimeoutMS)
	if err := agentconfig.Validate(r.Context(), s.store, ws, a.Type, a.ID, &req.Config); err != nil {
		return err
	}
	if req.Input, err = requireInput(&req.Config, req.Input); err != nil {
		return err
	}
	md := req.Metadata
	if md == nil {
		md = map[string]any{}
	}
	md["source"] = "playground"
	source := runSource(req.Source, "playground")
	return s.submit(w, r, runtime.SubmitRequest{WorkspaceID: ws, Agent: a, Config: &req.Config, Input: req.Input,
		Metadata: md, Source: source, TimeoutMS: timeout, Async: req.Async, UserID: userIDOf(r), EndUserID: optString(req.EndUserID)})
}

// submit starts a run and answers: 202 at once for async, else waits up to its timeout. The
// plan limits are checked, and the request's Idempotency-Key linked to the execution, in the
// transaction that records it; a retry that took over the key of a request that had already
// created its execution (its process died) answers from that execution instead.
func (s *Server) submit(w http.ResponseWriter, r *http.Request, req runtime.SubmitRequest) error {
	claim := idempotencyClaimOf(r)
	if claim != nil && claim.ExecutionID != "" {
		return s.answerExecution(w, r, req, claim.ExecutionID)
	}
	// Without limits or a key to link, the execution is recorded on its own (one statement
	// on PostgreSQL), not in a transaction.
	if s.executionLimited() || claim != nil {
		req.BeforeCreate = runtime.SQLHook(func(ctx context.Context, tx *store.Store, x *domain.Execution) error {
			if err := s.checkExecutionLimits(ctx, tx, req.WorkspaceID); err != nil {
				return err
			}
			if claim != nil {
				return tx.IdempotencyLinkExecution(ctx, claim, x.ID)
			}
			return nil
		})
	}
	x, run, err := s.engine.Submit(r.Context(), req)
	if err != nil {
		return err
	}
	return s.answerSubmitted(w, r, x, run, req.TimeoutMS)
}

// answerSubmitted answers a submitted execution: 202 at once when it runs async (run nil);
// otherwise once it stops (200 when it ended) or at timeoutMS (202 with its state then). A
// client that leaves gets nothing; the run goes on.
func (s *Server) answerSubmitted(w http.ResponseWriter, r *http.Request, x *domain.Execution, run *runtime.Waiter, timeoutMS int) error {
	if run == nil {
		writeData(w, http.StatusAccepted, x)
		return nil
	}
	timer := time.NewTimer(time.Duration(timeoutMS) * time.Millisecond)
	defer timer.Stop()
	var final *domain.Execution
	select {
	case <-run.Done():
		final = run.Result()
	case <-timer.C:
	case <-r.Context().Done():
		return nil // the client left; the run goes on
	}
	if final == nil {
		var err error
		if final, err = s.store.ExecutionGet(context.WithoutCancel(r.Context()), x.WorkspaceID, x.ID); err != nil {
			return err
		}
	}
	status := http.StatusOK
	if !domain.IsTerminal(final.Status) {
		status = http.StatusAccepted
	}
	writeData(w, status, final)
	return nil
}

// answerExecution answers a request whose execution id was created by an earlier request
// with the same Idempotency-Key, as submit would have: async at once (202), sync once the
// run stops (200 when it ended) or at the request's timeout (202).
func (s *Server) answerExecution(w http.ResponseWriter, r *http.Request, req runtime.SubmitRequest, id string) error {
	var x *domain.Execution
	var err error
	if !req.Async {
		ctx, cancel := context.WithTimeout(r.Context(), time.Duration(req.TimeoutMS)*time.Millisecond)
		x, err = s.engine.Await(ctx, req.WorkspaceID, id)
		cancel()
		if err != nil {
			return err
		}
		if r.Context().Err() != nil {
			return nil // the client left
		}
	}
	if x == nil {
		if x, err = s.store.ExecutionGet(context.WithoutCancel(r.Context()), req.WorkspaceID, id); err != nil {
			return err
		}
	}
	status := http.StatusOK
	if req.Async || !domain.IsTerminal(x.Status) {
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
	f := domain.ExecutionFilter{AgentID: q.Get("agent_id"), Status: q.Get("status"), SessionID: q.Get("session_id"), Source: q.Get("source"),
		EndUserID: q.Get("end_user_id"), ExperimentID: q.Get("experiment_id")}
	// status is a documented enum: the route table checks it against the documented values.
	if err := createdRange(q, &f.CreatedAfter, &f.CreatedBefore); err != nil {
		return err
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
		ended, err := s.pastEnd(r.Context(), ws, id, after)
		if err != nil {
			return err
		}
		if ended {
			w.WriteHeader(http.StatusNoContent)
			return nil
		}
	} else {
		// Its terminal frame may be out already, the run not yet gone from this process.
		ended := after >= 0 && sub.EndedBy(after)
		sub.Close()
		if ended {
			w.WriteHeader(http.StatusNoContent)
			return nil
		}
	}
	return s.streamKeyed(r, newSSE(w), ws, id, after)
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
	// At most 128 decisions, messages of at most 2000 characters: the document says so.
	x, err := s.engine.Decide(r.Context(), s.workspace(r), pathID(r, "id"),
		runtime.Review{Comment: req.Comment, Decisions: req.Decisions, Answer: req.Answer, DecidedBy: decidedBy(r)})
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
	x, err := s.engine.Deny(r.Context(), s.workspace(r), pathID(r, "id"), req.Reason, decidedBy(r))
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
	case "all": // any other value is one of the documented enum: the route table checks it
		status = ""
	}
	items, total, err := s.store.ApprovalList(r.Context(), s.workspace(r), status, r.URL.Query().Get("execution_id"), p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}
