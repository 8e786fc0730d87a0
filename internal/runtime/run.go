package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

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
	x       *store.Execution
	cfg     *store.AgentConfig
	agent   *store.Agent
	state   *runState
	topic   *topic
	seq     int
	pending []store.Event // frames not yet stored
	flushed time.Time
	spans   []*store.Span
	root    *store.Span
	usage   store.TokenUsage
	cost    float64
	started time.Time
	// compiled holds the version's guardrails once loaded.
	compiled []*guardrail.Guard
}

// runState is what survives an approval wait: enough to resume without anything in memory.
type runState struct {
	Phase      string           `json:"phase"` // "" (fresh) | "before_output" | "before_tools"
	Checkpoint string           `json:"checkpoint,omitempty"`
	Draft      string           `json:"draft,omitempty"`
	Messages   []llm.Message    `json:"messages,omitempty"`
	Calls      []llm.ToolCall   `json:"calls,omitempty"`
	Iteration  int              `json:"iteration,omitempty"`
	Usage      store.TokenUsage `json:"usage"`
	Cost       float64          `json:"cost"`
	Chat       *chatState       `json:"chat,omitempty"`
	Passed     []string         `json:"passed,omitempty"` // checkpoints already approved
	// Results memoizes finished steps and sub-agents by key, so a resumed run does not redo
	// them; Children maps the key of a sub-agent waiting for approval to its execution.
	Results  map[string]string `json:"results,omitempty"`
	Children map[string]string `json:"children,omitempty"`
}

// chatState carries a chat turn through the run to the atomic write at its end.
type chatState struct {
	SessionID     string `json:"session_id"`
	UserMessageID string `json:"user_message_id"`
	Content       string `json:"content"`
}

// emit publishes a frame to live subscribers and queues it for the store.
func (r *run) emit(event string, data any) {
	ev := r.frame(event, data)
	r.topic.publish(ev)
	if len(r.pending) > 64 || time.Since(r.flushed) > eventFlushInterval {
		r.flushEvents(context.WithoutCancel(r.e.ctx))
	}
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
func (r *run) frame(event string, data any) store.Event {
	raw, ok := data.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(data); err != nil {
			raw = []byte(`{}`)
		}
	}
	r.seq++
	ev := store.Event{Seq: r.seq, Event: event, Data: raw}
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
	r.pending = r.pending[:0]
	r.flushed = time.Now()
}

// span starts a span; end it with r.end.
func (r *run) span(kind, name string, input any) *store.Span {
	sp := &store.Span{ID: store.NewID(), TraceID: r.x.TraceID, WorkspaceID: r.x.WorkspaceID, Name: name, Kind: kind,
		Status: "ok", StartedAt: store.Now(), Attributes: store.JSONObject{}}
	if r.root != nil {
		sp.ParentID = &r.root.ID
	}
	if input != nil {
		sp.Input, _ = json.Marshal(input)
	}
	return sp
}

// end finishes a span with its output or error and keeps it for the final write.
func (r *run) end(sp *store.Span, output any, err error) {
	now := store.Now()
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

// addUsage accounts a model call's tokens and cost (catalog prices of the model).
func (r *run) addUsage(sp *store.Span, model string, u llm.Usage) {
	tu := store.TokenUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.PromptTokens + u.CompletionTokens}
	c := r.e.price(model, u)
	r.usage = r.usage.Add(tu)
	r.cost += c
	if sp != nil {
		sp.TokenUsage, sp.Cost = tu, c
	}
}

// outcome is how a pipeline pass ended.
type outcome struct {
	status string          // completed | failed | cancelled | awaiting_approval
	output json.RawMessage // completed
	err    string          // failed, cancelled
	wait   *store.Approval // awaiting_approval
}

// finish writes the outcome atomically: the status change with output, usage and cost, the
// remaining events (terminal frame included), the spans, the trace totals, the chat messages
// and the session's release. Then live subscribers are told the run has ended here.
func (r *run) finish(o outcome) (*store.Execution, error) {
	ctx := context.WithoutCancel(r.e.ctx)
	now := store.Now()
	dur := now.Sub(r.x.CreatedAt.Time).Milliseconds()
	usage, cost := r.usage, r.cost
	patch := store.ExecutionPatch{Usage: &usage, Cost: &cost}
	// The terminal frame is published only once everything it announces is committed.
	var terminalFrame *store.Event
	switch o.status {
	case store.StatusCompleted:
		patch.Output = o.output
		ev := r.frame("done", map[string]any{"output": o.output, "token_usage": usage, "time": float64(dur) / 1000})
		terminalFrame = &ev
	case store.StatusFailed, store.StatusCancelled:
		msg := o.err
		patch.Error = &msg
		ev := r.frame("error", map[string]any{"message": msg})
		terminalFrame = &ev
	case store.StatusAwaitingApproval:
		r.state.Usage, r.state.Cost = usage, cost
		patch.State, _ = json.Marshal(r.state)
	}
	terminal := store.IsTerminal(o.status)
	if terminal {
		patch.CompletedAt, patch.DurationMS, patch.ClearState = &now, &dur, true
	}
	if r.root != nil && (terminal || o.status == store.StatusAwaitingApproval) {
		r.end(r.root, map[string]any{"status": o.status}, errIf(o.status == store.StatusFailed, o.err))
		r.root = nil
	}
	var final *store.Execution
	err := r.e.st.InTx(ctx, func(tx *store.Store) error {
		var err error
		if final, err = tx.ExecutionTransition(ctx, r.x.WorkspaceID, r.x.ID, o.status, patch); err != nil {
			return err
		}
		if err := tx.EventAppend(ctx, r.x.ID, r.pending); err != nil {
			return err
		}
		if err := tx.SpanInsert(ctx, r.spans); err != nil {
			return err
		}
		traceStatus := o.status
		if err := tx.TraceFinish(ctx, r.x.WorkspaceID, r.x.TraceID, traceStatus, usage, cost, now, dur); err != nil {
			return err
		}
		if o.wait != nil {
			if err := tx.ApprovalCreate(ctx, o.wait); err != nil {
				return err
			}
		}
		if c := r.state.Chat; c != nil && terminal {
			if o.status == store.StatusCompleted {
				if err := r.storeChatTurn(ctx, tx, c, o.output); err != nil {
					return err
				}
			}
			if err := tx.ChatSessionUnlock(ctx, r.x.WorkspaceID, c.SessionID, r.x.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("finish execution %s as %s: %w", r.x.ID, o.status, err)
	}
	if terminalFrame != nil {
		r.topic.publish(*terminalFrame)
	}
	r.pending, r.spans = r.pending[:0], nil
	return final, nil
}

func (r *run) storeChatTurn(ctx context.Context, tx *store.Store, c *chatState, output json.RawMessage) error {
	reply := outputText(output)
	execID := r.x.ID
	user := &store.ChatMessage{ID: c.UserMessageID, Role: "user", Content: c.Content, ExecutionID: &execID,
		TokenUsage: store.TokenUsage{PromptTokens: llm.CountTokens(c.Content)}}
	asst := &store.ChatMessage{Role: "assistant", Content: reply, ExecutionID: &execID, UserMessageID: &c.UserMessageID,
		TokenUsage: r.usage}
	return tx.ChatMessageAppend(ctx, r.x.WorkspaceID, c.SessionID, user, asst)
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
