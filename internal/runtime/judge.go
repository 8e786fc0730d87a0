package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/store"
)

// JudgeRequest is one model call of an evaluator acting as judge: a model of the workspace,
// the messages, and the schema of the JSON answer (asked for in the provider's native
// structured-output mode).
type JudgeRequest struct {
	Workspace string
	Model     string
	Messages  []llm.Message
	Schema    json.RawMessage
	// Name names the judge's trace ("eval <evaluator name>"); Metadata goes on it.
	Name     string
	Metadata domain.JSONObject
}

// JudgeReply is a judge's answer: the JSON text, what it cost, and the trace that records the
// call (one llm span).
type JudgeReply struct {
	Content    string
	TokenUsage domain.TokenUsage
	Cost       float64
	TraceID    string
}

// judgeTimeout bounds one judge call, retries included.
const judgeTimeout = 2 * time.Minute

// Judge makes a judge's model call through the same routing as agent runs (the workspace's
// credential for the model's provider, or the simulated model), and records it on a trace of
// its own: the trace's totals and one llm span with the messages, the answer and its cost. A
// model that cannot be routed is a *ModelError; a failed call is recorded on the trace and
// returned.
func (e *Engine) Judge(ctx context.Context, req JudgeRequest) (*JudgeReply, error) {
	m, err := e.model(ctx, req.Workspace, req.Model)
	if err != nil {
		return nil, err
	}
	cfg := &domain.AgentConfig{Model: req.Model}
	rt, err := e.router.Route(ctx, req.Workspace, cfg, m)
	if err != nil {
		return nil, err
	}
	start := domain.Now()
	tr := &domain.Trace{WorkspaceID: req.Workspace, Name: req.Name, Metadata: req.Metadata, StartedAt: start}
	if err := e.st.TraceCreate(ctx, tr); err != nil {
		return nil, err
	}
	resp, _, callErr := llm.Call(ctx, rt.Provider, llm.Request{Model: req.Model, Messages: req.Messages, OutputSchema: req.Schema},
		func(llm.Event) bool { return false }, llm.CallOptions{MaxRetries: defaultMaxRetries, Timeout: judgeTimeout})
	end := domain.Now()
	dur := end.Sub(start.Time).Milliseconds()
	sp := &domain.Span{ID: store.NewID(), TraceID: tr.ID, WorkspaceID: req.Workspace, Name: "judge " + req.Model, Kind: "llm", Status: "ok",
		Model: &req.Model, Provider: &rt.Name, Attributes: domain.JSONObject{}, StartedAt: start, EndedAt: &end, DurationMS: &dur}
	sp.Input, _ = json.Marshal(map[string]any{"messages": req.Messages, "schema": req.Schema})
	out := &JudgeReply{TraceID: tr.ID}
	status := domain.StatusCompleted
	if callErr != nil {
		callErr = callError(rt, req.Model, callErr)
		msg := callErr.Error()
		sp.Status, sp.Error, status = "error", &msg, domain.StatusFailed
	} else {
		u := resp.Usage
		out.Content, out.Cost = resp.Content, price(m, u)
		out.TokenUsage = domain.TokenUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.PromptTokens + u.CompletionTokens}
		sp.TokenUsage, sp.Cost = out.TokenUsage, out.Cost
		sp.Output, _ = json.Marshal(map[string]any{"content": resp.Content})
	}
	// The trace is written with a context of its own: a caller that went away still leaves
	// the record of a call that was paid for.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	werr := errors.Join(e.st.SpanInsert(wctx, []*domain.Span{sp}),
		e.st.TraceFinish(wctx, req.Workspace, tr.ID, status, out.TokenUsage, out.Cost, end, dur))
	if callErr != nil {
		return nil, callErr
	}
	if werr != nil {
		return nil, fmt.Errorf("record judge trace: %w", werr)
	}
	return out, nil
}
