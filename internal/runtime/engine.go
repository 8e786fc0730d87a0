package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/store"
)

// maxDepth bounds sub-agent nesting (a multi_agent whose sub-agent is a multi_agent …).
const maxDepth = 5

// errCancelled is the cause of a run's context when a user cancels it.
var errCancelled = errors.New("execution cancelled")

// errShutdown is the cause when the server stops before a run ends.
var errShutdown = errors.New("the server shut down before the execution finished")

// Config is what an Engine needs.
type Config struct {
	Store    *store.Store
	Provider llm.Provider
	Logger   *slog.Logger
	// Workers is the size of the pool that runs async executions (default 16).
	Workers int
}

// Engine runs executions: async ones from a durable queue with a bounded worker pool,
// sync ones and chat turns at once, all through the same pipeline.
type Engine struct {
	st       *store.Store
	provider llm.Provider
	log      *slog.Logger
	workers  int
	hub      *hub

	ctx    context.Context
	cancel context.CancelCauseFunc
	wake   chan struct{}
	wg     sync.WaitGroup

	mu   sync.Mutex
	live map[string]*handle

	startOnce, stopOnce sync.Once
	models              sync.Map // model id -> *store.LLMModel
	versions            sync.Map // agent version id -> *store.AgentConfig
}

// handle is a run in progress in this process; its context exists from registration, so
// a cancel that arrives before the run starts still reaches it.
type handle struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	done   chan struct{}
	result *store.Execution // the execution as its run left it; set before done is closed
}

// Waiter follows a started run.
type Waiter struct{ h *handle }

// Done is closed when the run stops (terminal, or waiting for approval).
func (w *Waiter) Done() <-chan struct{} { return w.h.done }

// Result is the execution as the run left it, once Done is closed; nil if it could not be
// recorded (read it from the store then).
func (w *Waiter) Result() *store.Execution { return w.h.result }

// New returns an engine; call Start before submitting.
func New(cfg Config) *Engine {
	if cfg.Workers <= 0 {
		cfg.Workers = 16
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	return &Engine{st: cfg.Store, provider: cfg.Provider, log: cfg.Logger, workers: cfg.Workers, hub: newHub(),
		ctx: ctx, cancel: cancel, wake: make(chan struct{}, cfg.Workers), live: map[string]*handle{}}
}

// Start recovers from a previous process (runs it left running are failed; pending ones
// are queued) and starts the workers. Calling it again does nothing.
func (e *Engine) Start(ctx context.Context) error {
	var err error
	e.startOnce.Do(func() {
		if err = e.recover(ctx); err != nil {
			return
		}
		for range e.workers {
			e.wg.Go(e.worker)
		}
	})
	return err
}

// Stop lets runs in progress finish until ctx ends, then cancels the rest (they are
// recorded as failed) and waits for the workers. Calling it again does nothing.
func (e *Engine) Stop(ctx context.Context) {
	e.stopOnce.Do(func() {
		idle := make(chan struct{})
		go func() {
			for {
				e.mu.Lock()
				n := len(e.live)
				e.mu.Unlock()
				if n == 0 {
					close(idle)
					return
				}
				select {
				case <-ctx.Done():
					close(idle)
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
		<-idle
		e.cancel(errShutdown)
		e.wg.Wait()
	})
}

// recover fails the executions a dead process left running and releases chat sessions.
func (e *Engine) recover(ctx context.Context) error {
	running, err := e.st.ExecutionIDsByStatus(ctx, store.StatusRunning)
	if err != nil {
		return err
	}
	for _, r := range running {
		x, err := e.st.ExecutionGet(ctx, r[0], r[1])
		if err != nil {
			return err
		}
		msg := "the server stopped while this execution was running; it was marked failed when the server started again"
		if err := e.closeDirect(ctx, x, store.StatusFailed, msg, "", "", ""); err != nil && !isTransition(err) {
			return err
		}
		e.log.Warn("failed an execution left running by a previous process", "execution_id", x.ID)
	}
	if err := e.st.ChatSessionsUnlockAll(ctx); err != nil {
		return err
	}
	e.poke()
	return nil
}

func (e *Engine) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// worker claims pending executions and runs them, one at a time.
func (e *Engine) worker() {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for e.ctx.Err() == nil {
		x, err := e.st.ExecutionClaim(e.ctx)
		if err != nil {
			if e.ctx.Err() == nil {
				e.log.Error("claim execution", "error", err)
			}
			select {
			case <-e.ctx.Done():
			case <-tick.C:
			}
			continue
		}
		if x == nil {
			select {
			case <-e.ctx.Done():
			case <-e.wake:
			case <-tick.C:
			}
			continue
		}
		e.poke() // there may be more
		e.runExecution(e.ctx, x)
	}
}

// SubmitRequest describes a new execution.
type SubmitRequest struct {
	WorkspaceID string
	Agent       *store.Agent
	VersionID   *string            // the version run; nil with Config for a playground run
	Config      *store.AgentConfig // the configuration run
	Input       map[string]any
	Metadata    map[string]any
	Source      string
	TimeoutMS   int
	Async       bool
	// Chat makes the run a chat turn: the session is locked for it (409 when busy) and the
	// user message and reply are stored when it completes.
	Chat *ChatTurn
}

// ChatTurn is a user message sent to a session.
type ChatTurn struct {
	SessionID     string
	UserMessageID string
	Content       string
}

// Submit records a new execution and starts it: async ones are queued (status pending),
// others start at once in the background. done is closed when the run stops (terminal or
// awaiting approval); it is nil for async executions.
func (e *Engine) Submit(ctx context.Context, req SubmitRequest) (*store.Execution, *Waiter, error) {
	x := &store.Execution{ID: store.NewID(), WorkspaceID: req.WorkspaceID, AgentID: req.Agent.ID, AgentVersionID: req.VersionID,
		Source: req.Source, Input: req.Input, Metadata: req.Metadata, Config: req.Config, TimeoutMS: req.TimeoutMS, Status: store.StatusRunning}
	if req.Async {
		x.Status = store.StatusPending
	}
	if x.Input == nil {
		x.Input = store.JSONObject{}
	}
	if x.Metadata == nil {
		x.Metadata = store.JSONObject{}
	}
	state := &runState{}
	if c := req.Chat; c != nil {
		x.SessionID = &c.SessionID
		state.Chat = &chatState{SessionID: c.SessionID, UserMessageID: c.UserMessageID, Content: c.Content}
	}
	x.State, _ = json.Marshal(state)
	tr := &store.Trace{WorkspaceID: req.WorkspaceID, ExecutionID: &x.ID, AgentID: &req.Agent.ID, SessionID: x.SessionID,
		Name: req.Agent.Name, Metadata: store.JSONObject{"source": req.Source}}
	err := e.st.InTx(ctx, func(tx *store.Store) error {
		if c := req.Chat; c != nil {
			if err := tx.ChatSessionLock(ctx, req.WorkspaceID, c.SessionID, x.ID); err != nil {
				return err
			}
		}
		return tx.ExecutionCreate(ctx, x, tr)
	})
	if err != nil {
		return nil, nil, err
	}
	if req.Async {
		e.poke()
		return x, nil, nil
	}
	return x, e.start(x, req.Agent), nil
}

// start runs an execution in the background, tracked for Stop. agent may be nil.
func (e *Engine) start(x *store.Execution, agent *store.Agent) *Waiter {
	h := e.register(e.ctx, x.ID)
	e.wg.Go(func() { e.runRegistered(x, agent, h) })
	return &Waiter{h: h}
}

func (e *Engine) register(parent context.Context, id string) *handle {
	ctx, cancel := context.WithCancelCause(parent)
	h := &handle{ctx: ctx, cancel: cancel, done: make(chan struct{})}
	e.mu.Lock()
	e.live[id] = h
	e.mu.Unlock()
	return h
}

// runExecution runs a claimed execution in the calling goroutine.
func (e *Engine) runExecution(ctx context.Context, x *store.Execution) {
	e.runRegistered(x, nil, e.register(ctx, x.ID))
}

func (e *Engine) runRegistered(x *store.Execution, agent *store.Agent, h *handle) {
	ctx := h.ctx
	defer func() {
		h.cancel(nil)
		e.mu.Lock()
		if e.live[x.ID] == h {
			delete(e.live, x.ID)
		}
		e.mu.Unlock()
		close(h.done)
	}()
	h.result = e.runPipeline(ctx, x, agent)
}

// runPipeline runs a pass and records its outcome, returning the execution as recorded.
func (e *Engine) runPipeline(ctx context.Context, x *store.Execution, agent *store.Agent) *store.Execution {
	r := &run{e: e, x: x, cfg: x.Config, state: &runState{}, started: time.Now(), flushed: time.Now()}
	if len(x.State) > 0 {
		if err := json.Unmarshal(x.State, r.state); err != nil {
			e.log.Error("decode execution state", "execution_id", x.ID, "error", err)
		}
	}
	if r.state.Checkpoint != "" && r.state.Phase != "" {
		r.state.Passed = append(r.state.Passed, r.state.Checkpoint)
	}
	r.usage, r.cost = r.state.Usage, r.state.Cost
	var err error
	if x.CreatedAt != x.UpdatedAt || x.StartedAt == nil || !x.StartedAt.Equal(x.CreatedAt.Time) {
		// Not a run that starts with its record: it may have frames already (resumed after
		// approval, or claimed from the queue after a restart).
		if r.seq, err = e.st.EventLastSeq(context.WithoutCancel(ctx), x.ID); err != nil {
			e.log.Error("read event sequence", "execution_id", x.ID, "error", err)
		}
	}
	r.topic = e.hub.open(x.WorkspaceID, x.ID, r.seq)
	defer e.hub.close(x.ID, r.topic)
	if r.cfg == nil && x.AgentVersionID != nil {
		r.cfg = e.versionConfig(ctx, x.WorkspaceID, x.AgentID, *x.AgentVersionID)
	}
	var o outcome
	r.agent = agent
	if r.agent == nil {
		r.agent, err = e.st.AgentGet(ctx, x.WorkspaceID, x.AgentID)
	}
	if ctx.Err() != nil {
		// Cancelled (or shut down) before it started: whatever failed above failed for that.
		o = stopped(ctx)
	} else if err != nil {
		switch {
		case ctx.Err() != nil:
			o = stopped(ctx)
		case store.IsNotFound(err):
			o = outcome{status: store.StatusFailed, err: fmt.Sprintf("agent %s is no longer available", x.AgentID)}
		default:
			o = outcome{status: store.StatusFailed, err: "could not load the agent: " + err.Error()}
		}
	} else if r.cfg == nil {
		o = outcome{status: store.StatusFailed, err: "the execution has no configuration to run"}
	} else {
		r.root = r.span("agent", r.agent.Name, x.Input)
		r.root.ParentID = nil
		r.root.Attributes["agent_type"] = r.agent.Type
		o = r.execute(ctx)
	}
	final, err := r.finish(o)
	if err != nil {
		if !isTransition(err) {
			e.log.Error("record execution outcome", "execution_id", x.ID, "error", err)
		} else {
			// Someone else ended it first (a cancel racing the run's own end); theirs stands.
			e.log.Debug("execution ended elsewhere first", "execution_id", x.ID, "error", err)
		}
		return nil
	}
	if store.IsTerminal(o.status) && x.ParentID != nil {
		e.resumeParent(x.WorkspaceID, *x.ParentID)
	}
	return final
}

// versionConfig returns a version's configuration; versions are immutable, so it is cached.
func (e *Engine) versionConfig(ctx context.Context, ws, agentID, versionID string) *store.AgentConfig {
	if v, ok := e.versions.Load(versionID); ok {
		return v.(*store.AgentConfig)
	}
	v, err := e.st.AgentVersionGet(ctx, ws, agentID, versionID)
	if err != nil {
		return nil
	}
	e.versions.Store(versionID, &v.Config)
	return &v.Config
}

// resumeParent restarts a parent run that was waiting for this child's approval.
func (e *Engine) resumeParent(ws, parentID string) {
	ctx := context.WithoutCancel(e.ctx)
	p, err := e.st.ExecutionGet(ctx, ws, parentID)
	if err != nil || p.Status != store.StatusAwaitingApproval || waitingChild(p) == "" {
		return
	}
	x, err := e.st.ExecutionTransition(ctx, ws, parentID, store.StatusRunning, store.ExecutionPatch{})
	if err != nil {
		return // another path moved it first
	}
	e.start(x, nil)
}

// waitingChild returns the child execution a run waits for, if it waits for one.
func waitingChild(x *store.Execution) string {
	var st runState
	if len(x.State) == 0 || json.Unmarshal(x.State, &st) != nil || st.Phase != "await_child" {
		return ""
	}
	for _, id := range st.Children {
		return id
	}
	return ""
}

// runChild creates and runs a child execution of parent inline, returning it finished.
func (e *Engine) runChild(ctx context.Context, parent *store.Execution, agentID string, input map[string]any) (*store.Execution, error) {
	a, err := e.st.AgentGet(ctx, parent.WorkspaceID, agentID)
	if err != nil {
		return nil, err
	}
	if a.Config == nil || a.ActiveVersionID == nil {
		return nil, fmt.Errorf("sub-agent %s has no active version", agentID)
	}
	x := &store.Execution{ID: store.NewID(), WorkspaceID: parent.WorkspaceID, AgentID: a.ID, AgentVersionID: a.ActiveVersionID,
		ParentID: &parent.ID, RootID: parent.RootID, SessionID: parent.SessionID, Source: "agent", Status: store.StatusRunning,
		Input: input, Metadata: store.JSONObject{"parent_id": parent.ID}, Config: a.Config, TimeoutMS: parent.TimeoutMS}
	tr := &store.Trace{WorkspaceID: parent.WorkspaceID, ExecutionID: &x.ID, AgentID: &a.ID, SessionID: parent.SessionID, Name: a.Name,
		Metadata: store.JSONObject{"source": "agent", "parent_execution_id": parent.ID}}
	if err := e.st.ExecutionCreate(ctx, x, tr); err != nil {
		return nil, err
	}
	e.runRegistered(x, a, e.register(withDepth(ctx, depthFrom(ctx)+1), x.ID))
	return e.st.ExecutionGet(context.WithoutCancel(ctx), x.WorkspaceID, x.ID)
}

type depthKey struct{}

func withDepth(ctx context.Context, d int) context.Context {
	return context.WithValue(ctx, depthKey{}, d)
}

func depthFrom(ctx context.Context) int { d, _ := ctx.Value(depthKey{}).(int); return d }

// Cancel stops a pending, running or awaiting execution. A run in progress here is
// cancelled through its context and records itself as cancelled within milliseconds.
func (e *Engine) Cancel(ctx context.Context, ws, id string) (*store.Execution, error) {
	for attempt := range 120 {
		x, err := e.st.ExecutionGet(ctx, ws, id)
		if err != nil {
			return nil, err
		}
		if store.IsTerminal(x.Status) {
			return nil, &store.TransitionError{ID: id, From: x.Status, To: store.StatusCancelled}
		}
		e.mu.Lock()
		h := e.live[id]
		e.mu.Unlock()
		if h != nil && x.Status == store.StatusRunning {
			h.cancel(errCancelled)
			select {
			case <-h.done:
			case <-time.After(5 * time.Second):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			e.cancelDescendants(ctx, ws, id)
			return e.st.ExecutionGet(context.WithoutCancel(ctx), ws, id)
		}
		if x.Status == store.StatusRunning && h == nil && attempt < 100 {
			// Claimed a moment ago and not registered yet: give the worker a moment. (A run
			// of a process that is gone was failed when this one started.)
			time.Sleep(5 * time.Millisecond)
			continue
		}
		err = e.closeDirect(ctx, x, store.StatusCancelled, "execution cancelled", "cancelled", "", "")
		if isTransition(err) {
			continue // it moved meanwhile; look again
		}
		if err != nil {
			return nil, err
		}
		e.cancelDescendants(ctx, ws, id)
		return e.st.ExecutionGet(ctx, ws, id)
	}
	return nil, fmt.Errorf("cancel execution %s: its status kept changing", id)
}

// Approve resumes an execution waiting at a checkpoint.
func (e *Engine) Approve(ctx context.Context, ws, id, comment string) (*store.Execution, error) {
	cur, err := e.st.ExecutionGet(ctx, ws, id)
	if err != nil {
		return nil, err
	}
	if child := waitingChild(cur); child != "" && cur.Status == store.StatusAwaitingApproval {
		return nil, &store.ConflictError{Message: fmt.Sprintf("execution %s is waiting for its sub-agent execution %s; approve or deny that one", id, child)}
	}
	var x *store.Execution
	err = e.st.InTx(ctx, func(tx *store.Store) error {
		var err error
		if x, err = tx.ExecutionTransition(ctx, ws, id, store.StatusRunning, store.ExecutionPatch{}); err != nil {
			return err
		}
		_, err = tx.ApprovalDecide(ctx, ws, id, "approved", comment, "")
		return err
	})
	if err != nil {
		return nil, err
	}
	e.start(x, nil)
	return x, nil
}

// Deny ends an execution waiting at a checkpoint as rejected.
func (e *Engine) Deny(ctx context.Context, ws, id, reason string) (*store.Execution, error) {
	x, err := e.st.ExecutionGet(ctx, ws, id)
	if err != nil {
		return nil, err
	}
	if x.Status != store.StatusAwaitingApproval {
		return nil, &store.TransitionError{ID: id, From: x.Status, To: store.StatusRejected}
	}
	msg := "rejected at approval"
	if reason != "" {
		msg += ": " + reason
	}
	if err := e.closeDirect(ctx, x, store.StatusRejected, msg, "denied", "", reason); err != nil {
		return nil, err
	}
	return e.st.ExecutionGet(ctx, ws, id)
}

// closeDirect ends an execution that no run of this process owns (pending, awaiting
// approval, or orphaned): the status change, its terminal error frame, the trace, the
// approval decision and the chat session's release, in one transaction.
func (e *Engine) closeDirect(ctx context.Context, x *store.Execution, to, msg, approval, comment, reason string) error {
	now := store.Now()
	dur := now.Sub(x.CreatedAt.Time).Milliseconds()
	err := e.st.InTx(ctx, func(tx *store.Store) error {
		if _, err := tx.ExecutionTransition(ctx, x.WorkspaceID, x.ID, to, store.ExecutionPatch{Error: &msg, CompletedAt: &now, DurationMS: &dur, ClearState: true}); err != nil {
			return err
		}
		seq, err := tx.EventLastSeq(ctx, x.ID)
		if err != nil {
			return err
		}
		data, _ := json.Marshal(map[string]string{"message": msg})
		if err := tx.EventAppend(ctx, x.ID, []store.Event{{Seq: seq + 1, Event: "error", Data: data}}); err != nil {
			return err
		}
		if err := tx.TraceFinish(ctx, x.WorkspaceID, x.TraceID, to, x.TokenUsage, x.Cost, now, dur); err != nil {
			return err
		}
		if approval != "" {
			if _, err := tx.ApprovalDecide(ctx, x.WorkspaceID, x.ID, approval, comment, reason); err != nil {
				return err
			}
		}
		if x.SessionID != nil && x.ParentID == nil {
			return tx.ChatSessionUnlock(ctx, x.WorkspaceID, *x.SessionID, x.ID)
		}
		return nil
	})
	if err == nil {
		e.hub.notify(x.ID)
		if x.ParentID != nil {
			e.resumeParent(x.WorkspaceID, *x.ParentID)
		}
	}
	return err
}

// cancelDescendants cancels the unfinished executions under one (children waiting for
// approval are not reached by the parent's context).
func (e *Engine) cancelDescendants(ctx context.Context, ws, id string) {
	tree, err := e.st.ExecutionTree(ctx, ws, id)
	if err != nil {
		return
	}
	var walk func(n *store.ExecutionNode)
	walk = func(n *store.ExecutionNode) {
		for _, c := range n.Children {
			if !store.IsTerminal(c.Status) {
				if _, err := e.Cancel(ctx, ws, c.ID); err != nil && !isTransition(err) {
					e.log.Warn("cancel child execution", "execution_id", c.ID, "error", err)
				}
			}
			walk(c)
		}
	}
	walk(tree)
}

func isTransition(err error) bool {
	var te *store.TransitionError
	return errors.As(err, &te)
}

// Subscribe follows the frames of an execution running in this process.
func (e *Engine) Subscribe(id string) (*Subscription, bool) { return e.hub.Subscribe(id) }

// Watch returns a channel closed at the next change of an execution that is not running in
// this process (it starts, or ends without running); call stop when no longer waiting.
func (e *Engine) Watch(id string) (changed <-chan struct{}, stop func()) { return e.hub.watch(id) }

// model returns a catalog entry, cached for the engine's life (the catalog is read-only).
func (e *Engine) model(id string) *store.LLMModel {
	if v, ok := e.models.Load(id); ok {
		return v.(*store.LLMModel)
	}
	m, err := e.st.LLMModelGet(context.WithoutCancel(e.ctx), id)
	if err != nil {
		return nil
	}
	e.models.Store(id, m)
	return m
}

// price is the USD cost of a model call at the catalog's per-million-token prices.
func (e *Engine) price(model string, u llm.Usage) float64 {
	m := e.model(model)
	if m == nil {
		return 0
	}
	return (float64(u.PromptTokens)*m.InputPricePerMillion + float64(u.CompletionTokens)*m.OutputPricePerMillion) / 1e6
}

func (e *Engine) contextWindow(model string) int {
	if m := e.model(model); m != nil {
		return m.ContextWindow
	}
	return 0
}
