package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/guardrail"
	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/modelhealth"
	"github.com/agentplane/agentplane/internal/schemacheck"
)

// defaultMaxIterations bounds an agent's tool loop when its version sets no max_iterations.
const defaultMaxIterations = 5

// errAwait stops a pass at an approval checkpoint.
// approval is nil when the run waits for a sub-agent's approval rather than its own.
type errAwait struct{ approval *domain.Approval }

func (e *errAwait) Error() string {
	if e.approval == nil {
		return "awaiting a sub-agent's approval"
	}
	return "awaiting approval at " + e.approval.Checkpoint
}

// execute runs the pipeline for the run's agent type and returns how it ended.
func (r *run) execute(ctx context.Context) outcome {
	text, err := r.pipeline(ctx)
	var aw *errAwait
	switch {
	case errors.As(err, &aw):
		return outcome{status: domain.StatusAwaitingApproval, wait: aw.approval}
	case ctx.Err() != nil:
		return r.stopped(ctx)
	case err != nil:
		o := failed(err.Error())
		var te *llm.TimeoutError
		if errors.As(err, &te) {
			o.code = CodeTimeout
		}
		return o
	}
	out, err := r.finalOutput(text)
	if err != nil {
		return failed(err.Error())
	}
	return outcome{status: domain.StatusCompleted, output: out}
}

// failed is the outcome of a run that failed for msg.
func failed(msg string) outcome {
	return outcome{status: domain.StatusFailed, err: msg, code: CodeFailed}
}

// stopped is the outcome of a run whose context ended: cancelled by a user, stopped by a
// shutdown (queued again when the pass never reached a model call, so another node runs it
// from the start), or stopped because this node lost its lease.
func (r *run) stopped(ctx context.Context) outcome {
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, errCancelled):
		return outcome{status: domain.StatusCancelled, err: "execution cancelled", code: CodeCancelled}
	case errors.Is(cause, errShutdown) && !r.modelCalled && r.x.ParentID == nil:
		return outcome{status: domain.StatusPending}
	}
	o := failed("execution stopped: " + cause.Error())
	if errors.Is(cause, errShutdown) || errors.Is(cause, errLeaseLost) {
		o.code = CodeInterrupted
	}
	return o
}

// pipeline produces the final text (or JSON text, with an output_schema).
func (r *run) pipeline(ctx context.Context) (string, error) {
	if r.state.Phase == "await_child" {
		r.state.Phase = "" // resumed: memoized steps and the finished child are picked up below
	}
	if r.state.Phase == "before_output" {
		// Resumed after approval: the draft is the output.
		return r.state.Draft, nil
	}
	var text string
	var err error
	if r.state.Phase == "before_tools" || r.state.Phase == phaseToolApproval {
		text, err = r.agentLoop(ctx, r.state.Messages)
	} else {
		msgs, rerr := r.render(ctx)
		if rerr != nil {
			return "", rerr
		}
		if msgs, err = r.guardInput(ctx, msgs); err != nil {
			return "", err
		}
		runner, ok := agentRunners[r.agent.Type]
		if !ok {
			return "", fmt.Errorf("agent type %q has no runner", r.agent.Type)
		}
		text, err = runner(r, ctx, msgs)
	}
	if err != nil {
		return "", err
	}
	if text, err = r.check(ctx, guardrail.StageOutput, text); err != nil {
		return "", err
	}
	if cp := r.checkpoint("before_output"); cp != nil {
		r.state.Phase, r.state.Draft, r.state.Checkpoint = "before_output", text, cp.Name
		return "", r.await(cp, map[string]any{"draft_output": text})
	}
	return text, nil
}

// checkpoint returns the configured checkpoint for a stage, unless it was already approved.
func (r *run) checkpoint(when string) *domain.Checkpoint {
	if r.cfg.Approval == nil {
		return nil
	}
	for i, cp := range r.cfg.Approval.Checkpoints {
		if cp.When == when && !slices.Contains(r.state.Passed, cp.Name) {
			return &r.cfg.Approval.Checkpoints[i]
		}
	}
	return nil
}

func (r *run) await(cp *domain.Checkpoint, awaiting any) error {
	r.emit("thinking", map[string]any{"content": "Waiting for approval at checkpoint " + cp.Name + "."})
	return r.pause(r.approval(domain.ApprovalCheckpoint, cp.Name, cp.Description, awaiting))
}

// Defaults of a model call's bounds (config.max_retries, config.request_timeout_ms).
const (
	defaultMaxRetries     = 2
	defaultRequestTimeout = 120 * time.Second
)

// call makes one model call, streaming content deltas when stream is set: to the version's
// model, then, while the failure allows it (see fallsBack) and nothing of the call has
// reached the client, to each of config.fallback_models in turn. Each model tried is a span.
func (r *run) call(ctx context.Context, kind, name string, msgs []llm.Message, tools []llm.ToolSpec, stream bool) (*llm.Response, error) {
	n := 1 + len(r.cfg.FallbackModels)
	var failed []string
	for i := 0; ; i++ {
		resp, sent, err := r.callModel(ctx, i, kind, name, msgs, tools, stream)
		switch {
		case err == nil:
			return resp, nil
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case i == n-1 || sent || !fallsBack(err):
			if failed != nil {
				err = &chainError{earlier: failed, err: err}
			}
			return nil, err
		}
		failed = append(failed, err.Error())
	}
}

// callModel makes the call to the i-th model of the chain (see target) as a span, with the
// retries of config.max_retries. sent reports whether any of it reached the client.
func (r *run) callModel(ctx context.Context, i int, kind, name string, msgs []llm.Message, tools []llm.ToolSpec, stream bool) (resp *llm.Response, sent bool, err error) {
	model := r.cfg.Model
	if i > 0 {
		model = r.cfg.FallbackModels[i-1]
	}
	req := llm.Request{Model: model, Messages: msgs, Tools: tools, Temperature: r.cfg.Temperature, MaxTokens: r.cfg.MaxTokens}
	if stream && len(r.cfg.OutputSchema) > 0 {
		req.OutputSchema = r.cfg.OutputSchema
	}
	sp := r.span(kind, name, map[string]any{"model": model, "messages": len(msgs), "tools": len(tools)})
	sp.Attributes["model"] = model
	if i > 0 {
		sp.Attributes["fallback"] = i
	}
	t, err := r.target(ctx, i)
	if err != nil {
		r.end(sp, nil, err)
		return nil, false, err
	}
	rt := t.route
	sp.Attributes["provider"] = rt.Name
	if rt.Credential != "" {
		sp.Attributes["credential"] = rt.Credential
	}
	// A model known down is skipped without a call (its circuit is open) when there is a
	// fallback to skip to. Only such calls read and count toward circuits: the last model of
	// a chain (a version's only model, most often) is called whatever its circuit says, so a
	// simple run pays no read of the shared store (TestStatementsPerRun).
	circuit := modelhealth.CircuitKey(rt.Name, rt.BaseURL, model)
	guarded := i < len(r.cfg.FallbackModels)
	var gate modelhealth.Gate
	if guarded {
		if gate, err = r.e.circuits.Allow(ctx, circuit); err != nil {
			r.e.log.Warn("read the circuit of a model; calling it", "model", model, "error", err)
		}
	}
	if gate.Open {
		sp.Attributes["circuit"] = "open"
		err := &downError{msg: fmt.Sprintf("model %s: skipped, known down: its circuit opened after %d failed calls in a row and is tried again from %s",
			model, r.e.circuits.FailuresToOpen(), gate.Until.UTC().Format(time.RFC3339))}
		r.end(sp, nil, err)
		return nil, false, err
	}
	if err := r.reachModel(ctx); err != nil {
		r.end(sp, nil, err)
		return nil, false, err
	}
	opts := llm.CallOptions{MaxRetries: defaultMaxRetries, Timeout: defaultRequestTimeout}
	if r.cfg.MaxRetries != nil {
		opts.MaxRetries = *r.cfg.MaxRetries
	}
	if r.cfg.RequestTimeoutMS > 0 {
		opts.Timeout = time.Duration(r.cfg.RequestTimeoutMS) * time.Millisecond
	}
	defer r.observeModelCall(sp) // after the span ends, on every path below
	resp, attempts, err := llm.Call(ctx, rt.Provider, req, func(ev llm.Event) bool {
		switch {
		case ev.Kind == llm.EventThinking:
			r.emitText("thinking", ev.Text)
		case ev.Kind == llm.EventContent && stream:
			r.emitText("content", ev.Text)
		default:
			return false
		}
		sent = true
		return true
	}, opts)
	sp.Attributes["attempts"] = attempts
	if guarded && ctx.Err() == nil {
		if rerr := r.e.circuits.Record(context.WithoutCancel(ctx), circuit, gate, err); rerr != nil {
			r.e.log.Warn("record the outcome of a model call in its circuit", "model", model, "error", rerr)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			r.end(sp, nil, ctx.Err())
			return nil, sent, ctx.Err()
		}
		err = callError(rt, model, err)
		r.end(sp, nil, err)
		return nil, sent, err
	}
	r.answered = model
	r.addUsage(sp, t.entry, resp.Usage)
	sp.Attributes["stop_reason"] = resp.StopReason
	if len(resp.Media) > 0 {
		r.storeMedia(ctx, sp, modelMedia(resp.Media, model, rt.Name))
	}
	r.end(sp, map[string]any{"content": resp.Content, "tool_calls": resp.ToolCalls}, nil)
	return resp, sent, nil
}

// callError words a failed model call for the execution's error: a rejected credential
// names the provider, the credential and the status; other provider errors carry the
// provider's message; a timeout names the setting that bounds it.
func callError(rt *Route, model string, err error) error {
	var pe *llm.Error
	var te *llm.TimeoutError
	switch {
	case errors.As(err, &pe) && pe.Rejected():
		return fmt.Errorf("%s rejected credential %q (%d): %s", pe.Provider, rt.Credential, pe.Status, pe.Message)
	case errors.As(err, &pe):
		return fmt.Errorf("model %s: %w", model, pe)
	case errors.As(err, &te):
		return &callTimeoutError{msg: fmt.Sprintf("model %s: the call to %s did not finish within %d ms (config.request_timeout_ms)", model, rt.Name, te.Timeout.Milliseconds()), err: te}
	}
	return fmt.Errorf("model %s: %w", model, err)
}

// callTimeoutError words a model call's timeout for the execution and keeps the
// *llm.TimeoutError for errors.As (the terminal frame's code).
type callTimeoutError struct {
	msg string
	err *llm.TimeoutError
}

func (e *callTimeoutError) Error() string { return e.msg }
func (e *callTimeoutError) Unwrap() error { return e.err }

// answer makes a model call without tools and returns its text.
func (r *run) answer(ctx context.Context, kind, name string, msgs []llm.Message, stream bool) (string, error) {
	resp, err := r.call(ctx, kind, name, msgs, nil, stream)
	if err != nil {
		return "", err
	}
	return resp.Content, nil
}

// agentLoop alternates model calls and tool calls until the model answers, at most
// max_iterations model calls. The MCP sessions the tool calls open last until it returns.
func (r *run) agentLoop(ctx context.Context, msgs []llm.Message) (string, error) {
	tools, err := r.tools(ctx)
	if err != nil {
		return "", err
	}
	defer tools.close()
	limit := r.cfg.MaxIterations
	if limit <= 0 {
		limit = defaultMaxIterations
	}
	calls := r.state.Calls
	for i := r.state.Iteration; i < limit; i++ {
		if calls == nil {
			resp, err := r.call(ctx, "llm", fmt.Sprintf("model call %d", i+1), msgs, tools.specs, true)
			if err != nil {
				return "", err
			}
			tc := resp.ToolCalls
			if len(tc) == 0 {
				return resp.Content, nil
			}
			msgs = append(msgs, llm.Message{Role: "assistant", Content: resp.Content, ToolCalls: tc, Thinking: resp.Thinking})
			calls = tc
			if cp := r.checkpoint("before_tools"); cp != nil {
				r.state.Phase, r.state.Messages, r.state.Calls, r.state.Iteration, r.state.Checkpoint = "before_tools", msgs, tc, i, cp.Name
				return "", r.await(cp, map[string]any{"tool_calls": tc})
			}
		}
		// Calls that wait for a reviewer hold the whole batch; once decided, the batch runs
		// as decided.
		rejected := map[string]string{}
		if r.state.Phase == phaseToolApproval {
			calls, rejected = r.reviewed(msgs, calls)
		} else if held, questions := r.heldCalls(calls, tools); len(held) > 0 {
			return "", r.holdCalls(msgs, calls, i, held, questions)
		}
		for _, c := range calls {
			result, ok := rejected[c.ID]
			if ok {
				r.rejectTool(c, result)
			} else if result, err = r.runTool(ctx, c, tools); err != nil {
				return "", err
			}
			msgs = append(msgs, llm.Message{Role: "tool", Name: c.Name, ToolCallID: c.ID, Content: result})
		}
		calls = nil
		r.state.Calls, r.state.Phase, r.state.Decided, r.state.Answer = nil, "", nil, ""
	}
	return "", fmt.Errorf("the agent did not answer within max_iterations (%d model calls)", limit)
}

// runTool runs one tool call as a span (its arguments and result, each cut at 8 KiB), with
// tool_start/tool_end frames. A tool that fails, times out or does not exist answers the
// model with an error result; only the run's own end is an error.
func (r *run) runTool(ctx context.Context, c llm.ToolCall, tools *toolset) (string, error) {
	r.emit("tool_start", map[string]any{"id": c.ID, "name": c.Name})
	sp := r.span("tool", "tool: "+c.Name, nil)
	sp.Input = spanJSON(sp, "input_bytes", c.Arguments)
	res, outcome, err := tools.call(ctx, c, sp)
	if err != nil {
		r.end(sp, nil, err)
		return "", err
	}
	text := res.Text
	if len(res.Media) > 0 {
		// Images, audio and files go to the asset store; the model reads a note naming each
		// stored asset in its place instead of the bytes.
		text = res.TextWith(r.storeMedia(ctx, sp, toolMedia(res.Media, sp)))
	}
	sp.Attributes["outcome"] = string(outcome)
	result, summary := text, text
	var failure error
	if outcome != toolOK {
		result, summary, failure = errorResult(text), "error: "+text, errors.New(text)
	}
	r.end(sp, spanJSON(sp, "output_bytes", []byte(result)), failure)
	r.emit("tool_end", map[string]any{"id": c.ID, "name": c.Name, "summary": summarize(summary, 160)})
	return result, nil
}

// chain runs steps in order; each step's output is the next step's input.
func (r *run) chain(ctx context.Context, msgs []llm.Message) (string, error) {
	system := systemOf(msgs)
	input := lastUser(msgs)
	var out string
	for i, st := range r.cfg.Steps {
		last := i == len(r.cfg.Steps)-1
		text, err := r.step(ctx, st, system, input, last)
		if err != nil {
			return "", err
		}
		out, input = text, text
	}
	return out, nil
}

// workflow runs steps in dependency order; a step sees the outputs of its dependencies, and
// the output is that of the steps nothing depends on.
func (r *run) workflow(ctx context.Context, msgs []llm.Message) (string, error) {
	system, input := systemOf(msgs), lastUser(msgs)
	done := map[string]string{}
	order := topoOrder(r.cfg.Steps)
	dependedOn := map[string]bool{}
	for _, st := range r.cfg.Steps {
		for _, d := range st.DependsOn {
			dependedOn[d] = true
		}
	}
	var sinks []string
	for i, st := range order {
		stepInput := input
		if len(st.DependsOn) > 0 {
			var b strings.Builder
			b.WriteString(input)
			for _, d := range st.DependsOn {
				fmt.Fprintf(&b, "\n\n[%s]\n%s", d, done[d])
			}
			stepInput = b.String()
		}
		text, err := r.step(ctx, st, system, stepInput, i == len(order)-1)
		if err != nil {
			return "", err
		}
		done[st.ID] = text
		if !dependedOn[st.ID] {
			sinks = append(sinks, text)
		}
	}
	return strings.Join(sinks, "\n\n"), nil
}

// step runs one chain/workflow step: a model call with the step's instruction, or the
// step's agent as a child execution.
func (r *run) step(ctx context.Context, st domain.AgentStep, system, input string, last bool) (string, error) {
	key := "step:" + st.ID
	if text, ok := r.state.Results[key]; ok {
		return text, nil // done before an approval wait
	}
	name := st.Name
	if name == "" {
		name = st.ID
	}
	if !last {
		r.emit("thinking", map[string]any{"content": "Step " + name + "."})
	}
	var text string
	var err error
	if st.AgentID != "" {
		text, err = r.child(ctx, key, st.AgentID, map[string]any{"message": input, "instruction": st.Instruction})
	} else {
		sys := st.Instruction
		if system != "" {
			sys = system + "\n\n" + st.Instruction
		}
		msgs := []llm.Message{{Role: "system", Content: sys}, {Role: "user", Content: input}}
		text, err = r.answer(ctx, "step", "step: "+name, msgs, last)
	}
	if err == nil {
		r.memo(key, text)
	}
	return text, err
}

func (r *run) memo(key, text string) {
	if r.state.Results == nil {
		r.state.Results = map[string]string{}
	}
	r.state.Results[key] = text
}

// multiAgent runs each sub-agent as a child execution, then the coordinator's model call
// over their answers.
func (r *run) multiAgent(ctx context.Context, msgs []llm.Message) (string, error) {
	input := lastUser(msgs)
	var results strings.Builder
	for _, id := range r.cfg.SubAgents {
		callID := "agent_" + id
		name := id
		if a, err := r.e.st.AgentGet(ctx, r.x.WorkspaceID, id); err == nil {
			name = a.Name
		}
		key := "agent:" + id
		text, done := r.state.Results[key]
		if !done {
			r.emit("tool_start", map[string]any{"id": callID, "name": name})
			var err error
			if text, err = r.child(ctx, key, id, map[string]any{"message": input}); err != nil {
				return "", err
			}
			r.memo(key, text)
		}
		if !done {
			r.emit("tool_end", map[string]any{"id": callID, "name": name, "summary": summarize(text, 160)})
		}
		fmt.Fprintf(&results, "\n\n[%s]\n%s", name, text)
	}
	coord := append(slices.Clone(msgs), llm.Message{Role: "tool", Name: "sub_agents", ToolCallID: "sub_agents", Content: strings.TrimSpace(results.String())})
	return r.answer(ctx, "llm", "coordinator", coord, true)
}

// child runs another agent's active version as a child execution of this one and returns
// its output text. A child that stops at an approval checkpoint makes this run wait too; it
// resumes when the child ends (see Engine.resumeParent), finding the child by key.
func (r *run) child(ctx context.Context, key, agentID string, input map[string]any) (string, error) {
	if id, ok := r.state.Children[key]; ok {
		x, err := r.e.st.ExecutionGet(ctx, r.x.WorkspaceID, id)
		if err != nil {
			return "", err
		}
		if x.Status == domain.StatusAwaitingApproval {
			return "", &errAwait{}
		}
		delete(r.state.Children, key)
		r.usage = r.usage.Add(x.TokenUsage)
		r.cost += x.Cost
		return childResult(x)
	}
	if depth := depthFrom(ctx); depth >= maxDepth {
		return "", fmt.Errorf("sub-agent nesting is deeper than %d levels", maxDepth)
	}
	// A sub-agent's model calls are this run's work too: a rescue must not start it over.
	if err := r.reachModel(ctx); err != nil {
		return "", err
	}
	sp := r.span("subagent", "sub-agent: "+agentID, input)
	x, err := r.e.runChild(ctx, r.x, agentID, input)
	if err != nil {
		r.end(sp, nil, err)
		return "", err
	}
	sp.Attributes["execution_id"] = x.ID
	if x.Status == domain.StatusAwaitingApproval {
		if r.state.Children == nil {
			r.state.Children = map[string]string{}
		}
		r.state.Children[key] = x.ID
		r.state.Phase = "await_child"
		r.end(sp, map[string]any{"execution_id": x.ID, "status": x.Status}, nil)
		r.emit("thinking", map[string]any{"content": "Waiting for sub-agent execution " + x.ID + " to be approved."})
		return "", &errAwait{}
	}
	r.usage = r.usage.Add(x.TokenUsage)
	r.cost += x.Cost
	sp.TokenUsage, sp.Cost = x.TokenUsage, x.Cost
	text, err := childResult(x)
	r.end(sp, map[string]any{"execution_id": x.ID, "output": x.Output}, err)
	return text, err
}

func childResult(x *domain.Execution) (string, error) {
	if x.Status != domain.StatusCompleted {
		msg := "sub-agent execution " + x.ID + " " + x.Status
		if x.Error != nil {
			msg += ": " + *x.Error
		}
		return "", errors.New(msg)
	}
	return outputText(x.Output), nil
}

// finalOutput turns the final text into the execution's output, validating it against the
// version's output_schema when there is one.
func (r *run) finalOutput(text string) (json.RawMessage, error) {
	if len(r.cfg.OutputSchema) == 0 {
		return json.Marshal(map[string]string{"content": text})
	}
	sp := r.span("validation", "output schema", nil)
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		err = fmt.Errorf("output is not valid JSON for the output_schema: %v", err)
		r.end(sp, nil, err)
		return nil, err
	}
	sch, err := schemacheck.Compile(r.cfg.OutputSchema)
	if err == nil {
		err = sch.Validate(v)
	}
	if err != nil {
		err = fmt.Errorf("output does not match the output_schema: %v", err)
		r.end(sp, nil, err)
		return nil, err
	}
	r.end(sp, map[string]any{"valid": true}, nil)
	return json.RawMessage(text), nil
}

func topoOrder(steps []domain.AgentStep) []domain.AgentStep {
	done := map[string]bool{}
	var out []domain.AgentStep
	for len(out) < len(steps) {
		progress := false
		for _, st := range steps {
			if done[st.ID] {
				continue
			}
			ready := true
			for _, d := range st.DependsOn {
				ready = ready && done[d]
			}
			if ready {
				done[st.ID] = true
				out = append(out, st)
				progress = true
			}
		}
		if !progress { // a cycle: validation prevents it; run the rest in list order
			for _, st := range steps {
				if !done[st.ID] {
					done[st.ID] = true
					out = append(out, st)
				}
			}
		}
	}
	return out
}

func systemOf(msgs []llm.Message) string {
	if len(msgs) > 0 && msgs[0].Role == "system" {
		return msgs[0].Content
	}
	return ""
}

func lastUser(msgs []llm.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].Content
		}
	}
	return ""
}

func summarize(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
