package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/guardrail"
	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/store"
)

// eventFlushInterval bounds how far the stored event log may lag behind a long run.
const eventFlushInterval = 200 * time.Millisecond

// run is one pass of the pipeline over an execution, from start (or resume) to a terminal
// or waiting state. It owns the execution's event sequence while it lives.
type run struct {
	e       *Engine
	x       *domain.Execution
	cfg     *domain.AgentConfig
	agent   *domain.Agent
	state   *runState
	topic   *topic
	seq     int
	pending []domain.Event // frames not yet stored
	flushed time.Time
	spans   []*domain.Span
	root    *domain.Span
	usage   domain.TokenUsage
	cost    float64
	started time.Time
	// compiled holds the version's guardrails once loaded.
	compiled []*guardrail.Guard
	// model and route are resolved at the pass's first need (see modelEntry, provider).
	model    *domain.LLMModel
	modelSet bool
	route    *Route
	// fallbacks are the targets of config.fallback_models resolved so far (see target);
	// answered is the model that answered the pass's last call.
	fallbacks []*target
	answered  string
	// owner fences the pass's writes; stop cancels the pass (its handle's context).
	owner domain.Owner
	stop  context.CancelCauseFunc
	// reserved is the highest frame id the pass may send (see store.ExecutionReserveSeqs);
	// modelCalled says the pass recorded reaching a model call (see reachModel), or that the
	// row was written with the mark set (a sync run without Requeue, see store.Claim.ModelCalled).
	reserved    int
	modelCalled bool
}

// runState is what survives an approval wait: enough to resume without anything in memory.
type runState struct {
	Phase      string            `json:"phase"` // "" (fresh) | "before_output" | "before_tools" | "tool_approval"
	Checkpoint string            `json:"checkpoint,omitempty"`
	Draft      string            `json:"draft,omitempty"`
	Messages   []llm.Message     `json:"messages,omitempty"`
	Calls      []llm.ToolCall    `json:"calls,omitempty"`
	Iteration  int               `json:"iteration,omitempty"`
	Usage      domain.TokenUsage `json:"usage"`
	Cost       float64           `json:"cost"`
	Chat       *chatState        `json:"chat,omitempty"`
	// Conversation is the caller's extra system text and earlier turns (see SubmitRequest).
	Conversation *Conversation `json:"conversation,omitempty"`
	Passed       []string      `json:"passed,omitempty"` // checkpoints already approved
	// Results memoizes finished steps and sub-agents by key, so a resumed run does not redo
	// them; Children maps the key of a sub-agent waiting for approval to its execution.
	Results  map[string]string `json:"results,omitempty"`
	Children map[string]string `json:"children,omitempty"`
	// Decided are the held calls of the batch with the reviewer's decisions, and Answer the
	// answer to an ask_user question, written by the approve that resumes the run.
	Decided []domain.PendingCall `json:"decided,omitempty"`
	Answer  string               `json:"answer,omitempty"`
}

// chatState carries a chat turn through the run to the atomic write at its end.
type chatState struct {
	SessionID     string `json:"session_id"`
	UserMessageID string `json:"user_message_id"`
	Content       string `json:"content"`
	// Stored: the user message is in the session already (stored with the question of an
	// ask_user call, which was the turn's reply); the end stores the reply only.
	Stored bool `json:"stored,omitempty"`
}

// emit publishes a frame to live subscribers and queues it for the store. Its id is reserved
// first (a block at a time), so an id a client saw is never given to another frame, even
// after a crash; a frame too big for a message to other nodes is stored before it is sent.
func (r *run) emit(event string, data any) {
	ctx := context.WithoutCancel(r.e.ctx)
	if r.seq >= r.reserved {
		ok, err := r.e.st.ExecutionReserveSeqs(ctx, r.x.ID, r.owner, r.reserved+seqBlock)
		if err != nil {
			r.e.log.Error("reserve frame ids", "execution_id", r.x.ID, "error", err)
			return // not sent: an id may only go out reserved
		}
		if !ok {
			r.stop(errLeaseLost) // another node took the run over
			return
		}
		r.reserved += seqBlock
	}
	ev := r.frame(event, data)
	if len(ev.Data) > bigFrame {
		r.flushEvents(ctx)
	}
	r.topic.publish(ev)
	if len(r.pending) > 64 || time.Since(r.flushed) > eventFlushInterval {
		r.flushEvents(ctx)
	}
}

// reachModel records, once per pass and right before its first model call (or sub-agent),
// that the pass reached one: a rescue then fails the run instead of queueing it again. The
// statement is fenced, so a pass that lost its run (cancelled and closed, or rescued) learns
// it here and starts no model call. A sync run's row has the mark from its insert (unless
// SubmitRequest.Requeue: an experiment's item is marked here, as an async run): its pass
// sends no statement here, and a cancel that comes before its first call stops that call
// through the pass's context instead.
func (r *run) reachModel(ctx context.Context) error {
	if r.modelCalled {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	ok, err := r.e.st.ExecutionMarkModelCalled(ctx, r.x.ID, r.owner)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("could not record the start of the model call: %w", err)
	}
	if !ok {
		r.stop(errLeaseLost)
		return ctx.Err()
	}
	r.modelCalled = true
	return nil
}

// emitText publishes a {"content": text} frame (content and thinking), the hot path of a
// streamed reply, without going through reflection.
func (r *run) emitText(event, text string) {
	q, _ := json.Marshal(text)
	raw := make([]byte, 0, len(q)+12)
	raw = append(append(append(raw, `{"content":`...), q...), '}')
	r.emit(event, json.RawMessage(raw))
}

// frame numbers a frame and queues it for the store without publishing it.
func (r *run) frame(event string, data any) domain.Event {
	raw, ok := data.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(data); err != nil {
			raw = []byte(`{}`)
		}
	}
	r.seq++
	ev := domain.Event{Seq: r.seq, Event: event, Data: raw}
	r.pending = append(r.pending, ev)
	return ev
}

// flushEvents stores queued frames outside the final transaction (for long runs).
func (r *run) flushEvents(ctx context.Context) {
	if len(r.pending) == 0 {
		return
	}
	if err := r.e.st.EventAppend(ctx, r.x.ID, r.pending); err != nil {
		r.e.log.Error("store execution events", "execution_id", r.x.ID, "error", err)
		return
	}
	r.topic.setStored(r.pending[len(r.pending)-1].Seq)
	r.pending = r.pending[:0]
	r.flushed = time.Now()
}

// span starts a span; end it with r.end.
func (r *run) span(kind, name string, input any) *domain.Span {
	sp := &domain.Span{ID: store.NewSpanID(), TraceID: r.x.TraceID, WorkspaceID: r.x.WorkspaceID, Name: name, Kind: kind,
		Status: "ok", StartedAt: domain.Now(), Attributes: domain.JSONObject{}}
	if r.root != nil {
		sp.ParentID = &r.root.ID
	}
	if input != nil {
		sp.Input, _ = json.Marshal(input)
	}
	return sp
}

// end finishes a span with its output or error and keeps it for the final write.
func (r *run) end(sp *domain.Span, output any, err error) {
	now := domain.Now()
	sp.EndedAt = &now
	d := now.Sub(sp.StartedAt.Time).Milliseconds()
	sp.DurationMS = &d
	if output != nil {
		sp.Output, _ = json.Marshal(output)
	}
	if err != nil {
		sp.Status = "error"
		msg := err.Error()
		sp.Error = &msg
	}
	r.spans = append(r.spans, sp)
}

// modelEntry returns the catalog or workspace entry of the version's model (nil for a
// model only its credential's server knows), looked up once per pass.
func (r *run) modelEntry(ctx context.Context) (*domain.LLMModel, error) {
	if !r.modelSet {
		m, err := r.e.model(ctx, r.x.WorkspaceID, r.cfg.Model)
		if err != nil {
			return nil, err
		}
		r.model, r.modelSet = m, true
	}
	return r.model, nil
}

// provider returns where the pass's model calls go, resolved once per pass so that a
// credential changed or deleted meanwhile is noticed when a run resumes.
func (r *run) provider(ctx context.Context) (*Route, error) {
	if r.route != nil {
		return r.route, nil
	}
	m, err := r.modelEntry(ctx)
	if err != nil {
		return nil, err
	}
	if r.route, err = r.e.router.Route(ctx, r.x.WorkspaceID, r.cfg, m); err != nil {
		return nil, err
	}
	return r.route, nil
}

// addUsage accounts a model call's tokens and cost at the prices of m, the model that
// answered.
func (r *run) addUsage(sp *domain.Span, m *domain.LLMModel, u llm.Usage) {
	tu := domain.TokenUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.PromptTokens + u.CompletionTokens}
	c := price(m, u)
	r.usage = r.usage.Add(tu)
	r.cost += c
	if sp != nil {
		sp.TokenUsage, sp.Cost = tu, c
		if u.CachedTokens > 0 {
			sp.Attributes["cached_tokens"] = u.CachedTokens
		}
		if u.ReasoningTokens > 0 {
			sp.Attributes["reasoning_tokens"] = u.ReasoningTokens
		}
		if u.Estimated {
			sp.Attributes["usage_estimated"] = true
		}
	}
}

// outcome is how a pipeline pass ended.
type outcome struct {
	status string           // completed | failed | cancelled | awaiting_approval | pending (queued again)
	output json.RawMessage  // completed
	err    string           // failed, cancelled
	code   string           // failed, cancelled: the terminal frame's code (CodeFailed …)
	wait   *domain.Approval // awaiting_approval
}

// finish writes the outcome atomically: the status change with output, usage and cost, the
// remaining events (terminal frame included), the spans, the trace totals, the chat messages
// and the session's release. Then live subscribers are told the run has ended here. Every
// write is fenced by the pass's owner and attempt: a pass that lost its run writes nothing
// (a *store.TransitionError). A write the database refuses is recorded as failed instead
// (see finishFailed): a run is never left running.
func (r *run) finish(o outcome) (*domain.Execution, error) {
	ctx := context.WithoutCancel(r.e.ctx)
	if o.status == domain.StatusPending {
		return r.requeue(ctx)
	}
	now := domain.Now()
	dur := now.Sub(r.x.CreatedAt.Time).Milliseconds()
	usage, cost := r.usage, r.cost
	owner := r.owner
	patch := domain.ExecutionPatch{Usage: &usage, Cost: &cost, Owner: &owner}
	model := r.answered
	if model != "" {
		patch.Model = &model
	} else if r.x.Model != nil {
		model = *r.x.Model // answered in an earlier pass
	}
	// The terminal frame is published only once everything it announces is committed.
	var terminalFrame *domain.Event
	switch o.status {
	case domain.StatusCompleted:
		patch.Output = o.output
		done := map[string]any{"output": o.output, "token_usage": usage, "time": float64(dur) / 1000}
		if model != "" {
			done["model"] = model
		}
		ev := r.frame("done", done)
		terminalFrame = &ev
	case domain.StatusFailed, domain.StatusCancelled:
		msg := o.err
		patch.Error = &msg
		code := o.code
		if code == "" {
			code = CodeFailed
		}
		ev := r.frame("error", errorFrame(msg, code))
		terminalFrame = &ev
	case domain.StatusAwaitingApproval:
		r.state.Usage, r.state.Cost = usage, cost
		state := *r.state
		if c := state.Chat; c != nil && o.wait != nil && o.wait.Kind == domain.ApprovalQuestion {
			// The question is stored as the turn's reply with the user's message (see finish's write).
			state.Chat = &chatState{SessionID: c.SessionID, UserMessageID: c.UserMessageID, Content: c.Content, Stored: true}
		}
		patch.State, _ = json.Marshal(state)
	}
	// Every frame of the pass is stored with the move: the ids reserved above it go back.
	seq := r.seq
	patch.SeqUsed = &seq
	terminal := domain.IsTerminal(o.status)
	if terminal {
		patch.CompletedAt, patch.DurationMS, patch.ClearState = &now, &dur, true
	}
	if r.root != nil && (terminal || o.status == domain.StatusAwaitingApproval) {
		r.end(r.root, map[string]any{"status": o.status}, errIf(o.status == domain.StatusFailed, o.err))
		r.root = nil
	}
	// The run's input and output are stored once, on the execution, not again on its spans.
	domain.SpansShareExecution(r.spans, r.x.Input, patch.Output)
	// The trace's outcome is written with the move (one statement on PostgreSQL).
	patch.Trace = &domain.TraceEnd{Usage: usage, Cost: cost, EndedAt: now, DurationMS: dur}
	var final *domain.Execution
	write := func(tx Store) error {
		if err := r.e.fault(); err != nil {
			return err
		}
		var err error
		if final, err = tx.ExecutionTransition(ctx, r.x.WorkspaceID, r.x.ID, o.status, patch); err != nil {
			return err
		}
		// The done frame's output is the one just stored: the batch refers to it.
		if err := tx.EventAppendFinal(ctx, r.x.ID, r.pending, patch.Output); err != nil {
			return err
		}
		if err := tx.SpanInsert(ctx, r.spans); err != nil {
			return err
		}
		if o.wait != nil {
			if err := tx.ApprovalCreate(ctx, o.wait); err != nil {
				return err
			}
			if c := r.state.Chat; c != nil && o.wait.Kind == domain.ApprovalQuestion && !c.Stored {
				if err := r.storeChatQuestion(ctx, tx, c, o.wait.Question); err != nil {
					return err
				}
			}
		}
		if c := r.state.Chat; c != nil && terminal {
			if o.status == domain.StatusCompleted {
				if err := r.storeChatTurn(ctx, tx, c, o.output); err != nil {
					return err
				}
			}
			if err := tx.ChatSessionUnlock(ctx, r.x.WorkspaceID, c.SessionID, r.x.ID); err != nil {
				return err
			}
		}
		return nil
	}
	// A failed write is tried again a few times (a connection lost, a busy database) before the
	// run is recorded as failed instead.
	var err error
	for attempt, pause := 1, 50*time.Millisecond; ; attempt, pause = attempt+1, pause*4 {
		if err = r.e.st.InTx(ctx, write); err == nil || isTransition(err) || attempt == finishAttempts {
			break
		}
		r.e.log.Warn("record execution outcome; trying again", "execution_id", r.x.ID, "error", err, "retry_in", pause)
		time.Sleep(pause)
	}
	if err != nil {
		err = fmt.Errorf("finish execution %s as %s: %w", r.x.ID, o.status, err)
		if isTransition(err) {
			return nil, err // someone else ended it first; theirs stands
		}
		// Something of the pass was refused (a value the database cannot store, say), or the
		// database failed: the run must still end, or it stays running and its chat session
		// locked until its lease expires.
		r.e.log.Error("record execution outcome; recording it as failed instead", "execution_id", r.x.ID, "error", err)
		if terminalFrame != nil {
			r.seq-- // the refused terminal frame was never published: the failure takes its place
		}
		return r.finishFailed(ctx, now, dur)
	}
	r.topic.setStored(r.seq)
	if terminalFrame != nil {
		r.topic.publish(*terminalFrame)
	}
	r.pending, r.spans = r.pending[:0], nil
	return final, nil
}

// finishAttempts is how many times finish tries to write a pass's outcome before it
// records the run as failed instead.
const finishAttempts = 3

// finishRetryFor bounds how long finishFailed keeps trying once the node is shutting down
// (before that it tries until it succeeds: the database may come back).
const finishRetryFor = 5 * time.Second

// finishFailed ends a run whose outcome could not be written as failed, writing only what
// cannot be at fault: the status with a message, the terminal error frame, the trace's end and
// the chat session's release. The pass's unstored frames, spans and chat messages are dropped.
// A failing write is tried again with backoff: while it is, the run's handle stays
// registered, so the heartbeat keeps its lease and nobody else takes it over.
func (r *run) finishFailed(ctx context.Context, now domain.Time, dur int64) (*domain.Execution, error) {
	msg := fmt.Sprintf("the outcome of execution %s could not be stored; the server log has the cause", r.x.ID)
	usage, cost := r.usage, r.cost
	r.pending, r.spans = r.pending[:0], nil
	ev := r.frame("error", errorFrame(msg, CodeFailed))
	seq := r.seq
	owner := r.owner
	patch := domain.ExecutionPatch{Move: domain.MoveFail, Usage: &usage, Cost: &cost, Error: &msg, CompletedAt: &now, DurationMS: &dur, ClearState: true,
		SeqUsed: &seq, Owner: &owner, Trace: &domain.TraceEnd{Usage: usage, Cost: cost, EndedAt: now, DurationMS: dur}}
	var stopping time.Time
	backoff := 50 * time.Millisecond
	for {
		var final *domain.Execution
		err := r.e.st.InTx(ctx, func(tx Store) error {
			if err := r.e.fault(); err != nil {
				return err
			}
			var err error
			if final, err = tx.ExecutionTransition(ctx, r.x.WorkspaceID, r.x.ID, domain.MoveFail.Status(), patch); err != nil {
				return err
			}
			if err := tx.EventAppend(ctx, r.x.ID, r.pending); err != nil {
				return err
			}
			if c := r.state.Chat; c != nil {
				return tx.ChatSessionUnlock(ctx, r.x.WorkspaceID, c.SessionID, r.x.ID)
			}
			return nil
		})
		if err == nil {
			r.pending = r.pending[:0]
			r.topic.setStored(seq)
			r.topic.publish(ev)
			return final, nil
		}
		if isTransition(err) {
			return nil, fmt.Errorf("record execution %s as failed: %w", r.x.ID, err)
		}
		if r.e.ctx.Err() != nil {
			if stopping.IsZero() {
				stopping = time.Now()
			} else if time.Since(stopping) > finishRetryFor {
				// The node stops: its lease expires and the leader fails the run.
				return nil, fmt.Errorf("record execution %s as failed: %w", r.x.ID, err)
			}
		}
		r.e.log.Error("record execution as failed; trying again", "execution_id", r.x.ID, "error", err, "retry_in", backoff)
		time.Sleep(backoff)
		backoff = min(backoff*2, 2*time.Second)
	}
}

// requeue puts a run stopped by a drain before any model call back in the queue, with the
// frames it sent stored, for another node (or this one, restarted) to run from the start.
func (r *run) requeue(ctx context.Context) (*domain.Execution, error) {
	seq, owner := r.seq, r.owner
	var ok bool
	err := r.e.st.InTx(ctx, func(tx Store) error {
		if err := tx.EventAppend(ctx, r.x.ID, r.pending); err != nil {
			return err
		}
		var err error
		ok, err = tx.ExecutionRequeue(ctx, r.x.WorkspaceID, r.x.ID, &owner, &seq)
		if err == nil && !ok {
			err = &store.TransitionError{ID: r.x.ID, From: domain.StatusRunning, To: domain.StatusPending, Fenced: true}
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("queue execution %s again: %w", r.x.ID, err)
	}
	r.topic.setStored(seq)
	r.pending = r.pending[:0]
	x := *r.x
	x.Status, x.OwnerNode, x.LeaseExpiresAt, x.ModelCalled, x.SeqReserved = domain.StatusPending, nil, nil, false, seq
	return &x, nil
}

func (r *run) storeChatTurn(ctx context.Context, tx Store, c *chatState, output json.RawMessage) error {
	return r.storeChat(ctx, tx, c, outputText(output))
}

// storeChatQuestion stores an ask_user question as the turn's reply: the user's next
// message in the session answers it.
func (r *run) storeChatQuestion(ctx context.Context, tx Store, c *chatState, question string) error {
	return r.storeChat(ctx, tx, c, question)
}

// storeChat appends the turn's user message (unless stored already) and the reply.
func (r *run) storeChat(ctx context.Context, tx Store, c *chatState, reply string) error {
	execID := r.x.ID
	var msgs []*domain.ChatMessage
	if !c.Stored {
		msgs = append(msgs, &domain.ChatMessage{ID: c.UserMessageID, Role: "user", Content: c.Content, ExecutionID: &execID,
			TokenUsage: domain.TokenUsage{PromptTokens: llm.CountTokens(c.Content)}})
	}
	msgs = append(msgs, &domain.ChatMessage{Role: "assistant", Content: reply, ExecutionID: &execID, UserMessageID: &c.UserMessageID,
		TokenUsage: r.usage})
	return tx.ChatMessageAppend(ctx, r.x.WorkspaceID, c.SessionID, msgs...)
}

// outputText is the text of an output: its content field, or the JSON itself.
func outputText(output json.RawMessage) string {
	var v struct {
		Content *string `json:"content"`
	}
	if json.Unmarshal(output, &v) == nil && v.Content != nil {
		return *v.Content
	}
	return string(output)
}

func errIf(cond bool, msg string) error {
	if cond {
		return errors.New(msg)
	}
	return nil
}
