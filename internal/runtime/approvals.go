package runtime

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/schemacheck"
	"github.com/agentplane/agentplane/internal/store"
)

// phaseToolApproval is the phase of a run waiting for decisions on held tool calls (or for
// the answer to an ask_user question).
const phaseToolApproval = "tool_approval"

// heldCalls returns the calls of a batch that wait for a reviewer: those config.approval.tools
// says always for, and ask_user questions. Each carries its tool's input schema, against
// which edited arguments are checked.
func (r *run) heldCalls(calls []llm.ToolCall, tools *toolset) (held []domain.PendingCall, questions []llm.ToolCall) {
	for _, c := range calls {
		if t, ok := tools.local[c.Name].(*askUserTool); ok && t != nil {
			if q, _ := askArgs(c.Arguments); q != "" {
				questions = append(questions, c)
				held = append(held, domain.PendingCall{CallID: c.ID, Name: c.Name, Arguments: c.Arguments, InputSchema: askUserSchema})
			}
			continue
		}
		if r.cfg.Approval.NeedsApproval(c.Name) {
			held = append(held, domain.PendingCall{CallID: c.ID, Name: c.Name, Arguments: c.Arguments, InputSchema: tools.schemaOf(c.Name)})
		}
	}
	return held, questions
}

// schemaOf returns the input schema of a tool the run offers (nil for an unknown tool).
func (ts *toolset) schemaOf(name string) json.RawMessage {
	i := slices.IndexFunc(ts.specs, func(s llm.ToolSpec) bool { return s.Name == name })
	if i < 0 {
		return nil
	}
	return ts.specs[i].InputSchema
}

// holdCalls stops the pass with a batch of tool calls waiting for a reviewer: the batch
// and the conversation so far are kept for the resume.
func (r *run) holdCalls(msgs []llm.Message, calls []llm.ToolCall, iteration int, held []domain.PendingCall, questions []llm.ToolCall) error {
	r.state.Phase, r.state.Messages, r.state.Calls, r.state.Iteration = phaseToolApproval, msgs, calls, iteration
	r.state.Checkpoint, r.state.Decided, r.state.Answer = "", nil, ""
	names := make([]string, len(held))
	for i, h := range held {
		names[i] = h.Name
	}
	a := r.approval(domain.ApprovalTools, "approval.tools", "The model called tools that need approval: "+strings.Join(names, ", ")+".",
		map[string]any{"tool_calls": calls})
	if len(questions) > 0 {
		a.Kind, a.Checkpoint, a.Description = domain.ApprovalQuestion, askUserName, "The agent asks the user a question."
		var qs []string
		for _, q := range questions {
			text, choices := askArgs(q.Arguments)
			qs, a.Choices = append(qs, text), append(a.Choices, choices...)
		}
		a.Question = strings.Join(qs, "\n")
	}
	a.Calls = held
	return r.pause(a)
}

// approval is a pending approval of the run, with the version's timeout.
func (r *run) approval(kind, name, desc string, awaiting any) *domain.Approval {
	raw, _ := json.Marshal(awaiting)
	a := &domain.Approval{ID: store.NewID(), WorkspaceID: r.x.WorkspaceID, ExecutionID: r.x.ID, AgentID: r.x.AgentID,
		Kind: kind, Checkpoint: name, Description: desc, Awaiting: raw}
	if ac := r.cfg.Approval; ac != nil && ac.TimeoutSeconds > 0 {
		exp := domain.TimeFromMillis(time.Now().Add(time.Duration(ac.TimeoutSeconds) * time.Second).UnixMilli())
		a.ExpiresAt, a.OnTimeout = &exp, cmp.Or(ac.OnTimeout, "reject")
	}
	return a
}

// pause announces the wait (an approval span and the approval_required frame) and stops
// the pass; finish records the approval with the status change.
func (r *run) pause(a *domain.Approval) error {
	sp := r.span("approval", "approval: "+a.Checkpoint, json.RawMessage(a.Awaiting))
	r.end(sp, map[string]any{"status": "awaiting_approval", "approval_id": a.ID}, nil)
	calls := make([]map[string]any, len(a.Calls))
	for i, c := range a.Calls {
		calls[i] = map[string]any{"call_id": c.CallID, "name": c.Name, "arguments": c.Arguments}
	}
	frame := map[string]any{"execution_id": r.x.ID, "approval_id": a.ID, "kind": a.Kind, "calls": calls}
	if a.Kind == domain.ApprovalQuestion {
		frame["question"], frame["choices"] = a.Question, a.Choices
	}
	r.emit("approval_required", frame)
	return &errAwait{approval: a}
}

// reviewed applies the decisions a resumed batch was given: an edited call runs with its
// new arguments (in the conversation too, so the model sees what ran); a rejected one
// returns the reviewer's message instead of running.
func (r *run) reviewed(msgs []llm.Message, calls []llm.ToolCall) (out []llm.ToolCall, rejected map[string]string) {
	out = slices.Clone(calls)
	rejected = map[string]string{}
	for _, d := range r.state.Decided {
		i := slices.IndexFunc(out, func(c llm.ToolCall) bool { return c.ID == d.CallID })
		if i < 0 {
			continue
		}
		switch d.Decision {
		case "reject":
			rejected[d.CallID] = fmt.Sprintf("The reviewer rejected this call to %s: %s", d.Name, cmp.Or(d.Message, "no reason given"))
		case "edit":
			out[i].Arguments = d.EditedArguments
		}
	}
	if n := len(msgs); n > 0 && len(msgs[n-1].ToolCalls) > 0 {
		msgs[n-1].ToolCalls = out
	}
	return out, rejected
}

// rejectTool answers a call the reviewer rejected, with frames and a span like a call's.
func (r *run) rejectTool(c llm.ToolCall, text string) string {
	r.emit("tool_start", map[string]any{"id": c.ID, "name": c.Name})
	sp := r.span("tool", "tool: "+c.Name, nil)
	sp.Input = spanJSON(sp, "input_bytes", c.Arguments)
	sp.Attributes["outcome"] = "rejected"
	r.end(sp, text, nil)
	r.emit("tool_end", map[string]any{"id": c.ID, "name": c.Name, "summary": summarize(text, 160)})
	return text
}

// Review is a decision on an execution awaiting approval (POST /executions/{id}/approve).
type Review struct {
	Comment string
	// Decisions decide pending tool calls one by one; a pending call without one is approved.
	Decisions []CallDecision
	// Answer answers a question (an approval of kind question).
	Answer    string
	DecidedBy string // user:<id>, api_key:<id>, timeout, chat …
	// ChatMessageID is the id of the chat message whose content is Answer (an answer sent
	// as the next message of the run's chat session): the end stores it with the reply.
	ChatMessageID string
	// BeforeDecide, when set, runs inside the transaction that decides: an error undoes the
	// decision. The answer of a chat message or a platform event records its Idempotency-Key
	// or event key there, so a retried answer is recognised, not sent as a new turn.
	BeforeDecide func(ctx context.Context, tx Store, x *domain.Execution) error
	// timedOut: decided by the approval's timeout, which answers no question.
	timedOut bool
}

// CallDecision decides one pending tool call: approve, reject (Message says why) or edit
// (Arguments replace the model's, and must satisfy the tool's input schema).
type CallDecision struct {
	CallID    string          `json:"call_id" minLength:"1" doc:"The pending call (see the approval's calls)."`
	Decision  string          `json:"decision" enum:"approve,reject,edit"`
	Message   string          `json:"message,omitempty" maxLength:"2000" doc:"reject: why; the model reads it as the call's result."`
	Arguments json.RawMessage `json:"arguments,omitempty" doc:"edit: the arguments to run the call with instead, a JSON object valid against the tool's input schema."`
}

// decide checks a review against the pending approval and returns its calls with their
// decisions. A decision for a call that is not pending, an unknown decision, edited arguments
// that the tool's schema refuses, a question without an answer, or an answer to no question
// is a *store.ValidationError.
func (rv Review) decide(a *domain.Approval) ([]domain.PendingCall, error) {
	invalid := func(field, format string, args ...any) error {
		return &store.ValidationError{Field: field, Message: fmt.Sprintf(format, args...)}
	}
	switch {
	case a.Kind == domain.ApprovalQuestion && strings.TrimSpace(rv.Answer) == "" && !rv.timedOut:
		return nil, invalid("answer", "is required: execution %s waits for the answer to %q", a.ExecutionID, a.Question)
	case a.Kind != domain.ApprovalQuestion && rv.Answer != "":
		return nil, invalid("answer", "execution %s asks no question (its approval is of kind %s)", a.ExecutionID, a.Kind)
	case len(rv.Decisions) > 0 && len(a.Calls) == 0:
		return nil, invalid("decisions", "execution %s has no pending tool calls to decide (its approval is of kind %s)", a.ExecutionID, a.Kind)
	}
	calls := slices.Clone(a.Calls)
	seen := map[string]bool{}
	for i, d := range rv.Decisions {
		f := fmt.Sprintf("decisions[%d]", i)
		k := slices.IndexFunc(calls, func(c domain.PendingCall) bool { return c.CallID == d.CallID })
		if k < 0 {
			ids := make([]string, len(calls))
			for j, c := range calls {
				ids[j] = c.CallID
			}
			return nil, invalid(f+".call_id", "no pending call %q (pending: %s)", d.CallID, strings.Join(ids, ", "))
		}
		if seen[d.CallID] {
			return nil, invalid(f+".call_id", "call %q is decided twice", d.CallID)
		}
		seen[d.CallID] = true
		c := &calls[k]
		c.Decision, c.Message = d.Decision, d.Message
		switch d.Decision {
		case "approve", "reject":
		case "edit":
			if err := checkArguments(f+".arguments", c, d.Arguments); err != nil {
				return nil, err
			}
			c.EditedArguments = d.Arguments
		default:
			return nil, invalid(f+".decision", "must be one of approve, reject, edit, got %q", d.Decision)
		}
	}
	for i := range calls {
		if calls[i].Decision == "" {
			calls[i].Decision = "approve"
		}
	}
	return calls, nil
}

// checkArguments checks edited arguments: a JSON object the tool's input schema accepts.
func checkArguments(field string, c *domain.PendingCall, args json.RawMessage) error {
	var v any
	if err := json.Unmarshal(args, &v); err != nil || args == nil {
		return &store.ValidationError{Field: field, Message: fmt.Sprintf("edit of call %q needs arguments, a JSON object", c.CallID)}
	}
	if _, ok := v.(map[string]any); !ok {
		return &store.ValidationError{Field: field, Message: fmt.Sprintf("edit of call %q: arguments must be a JSON object", c.CallID)}
	}
	if len(c.InputSchema) == 0 {
		return nil
	}
	s, err := schemacheck.Compile(c.InputSchema)
	if err != nil {
		return nil // a server's schema that does not compile constrains nothing here
	}
	if err := s.Validate(v); err != nil {
		return &store.ValidationError{Field: field, Message: fmt.Sprintf("arguments of call %q do not satisfy the input schema of %s: %s", c.CallID, c.Name, err)}
	}
	return nil
}

// resumeState is the run's state with a review's decisions, for the pass that resumes it.
func resumeState(x *domain.Execution, calls []domain.PendingCall, rv Review) (json.RawMessage, error) {
	var st runState
	if len(x.State) > 0 {
		if err := json.Unmarshal(x.State, &st); err != nil {
			return nil, fmt.Errorf("execution %s: decode state: %w", x.ID, err)
		}
	}
	if st.Phase != phaseToolApproval {
		return nil, nil // a checkpoint: its state resumes as it is
	}
	st.Decided, st.Answer = calls, rv.Answer
	if st.Chat != nil && rv.ChatMessageID != "" {
		st.Chat = &chatState{SessionID: st.Chat.SessionID, UserMessageID: rv.ChatMessageID, Content: rv.Answer}
	}
	return json.Marshal(st)
}

// expiredBatch bounds the approvals one pass of the timer decides.
const expiredBatch = 100

// expireApprovals decides the pending approvals whose config.approval.timeout_seconds has
// passed, as their on_timeout says: approve approves every pending call (a question gets no
// answer); reject rejects every pending call with a message saying so, and the run goes on,
// or denies a checkpoint. It is the leader's job (leaderLoop); each decision is the guarded
// transition an approve makes, so a timeout fires once even if two nodes led for a moment or
// a reviewer decided at the same time.
func (e *Engine) expireApprovals(ctx context.Context) error {
	list, err := e.st.ApprovalsExpired(ctx, domain.Now(), expiredBatch)
	if err != nil {
		return err
	}
	for _, a := range list {
		if err := e.expire(ctx, a); err != nil && !isTransition(err) && ctx.Err() == nil {
			e.log.Error("decide an expired approval", "approval_id", a.ID, "execution_id", a.ExecutionID, "error", err)
		}
	}
	return nil
}

func (e *Engine) expire(ctx context.Context, a *domain.Approval) error {
	const by = "timeout"
	why := "no decision within config.approval.timeout_seconds"
	rv := Review{Comment: "approved on timeout", DecidedBy: by, timedOut: true}
	switch {
	case a.OnTimeout == "approve":
	case len(a.Calls) == 0: // a checkpoint
		_, err := e.Deny(ctx, a.WorkspaceID, a.ExecutionID, why, by)
		return err
	default:
		rv.Comment = ""
		for _, c := range a.Calls {
			rv.Decisions = append(rv.Decisions, CallDecision{CallID: c.CallID, Decision: "reject", Message: why})
		}
	}
	_, err := e.Decide(ctx, a.WorkspaceID, a.ExecutionID, rv)
	return err
}
