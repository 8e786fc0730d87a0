package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// TokenUsage counts tokens.
type TokenUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Execution is one run of an agent.
type Execution struct {
	ID             string          `json:"id"`
	WorkspaceID    string          `json:"workspace_id"`
	AgentID        string          `json:"agent_id"`
	AgentVersionID *string         `json:"agent_version_id"`
	ParentID       *string         `json:"parent_id"`
	RootID         string          `json:"root_id"`
	SessionID      *string         `json:"session_id"`
	Source         string          `json:"source"`
	UserID         *string         `json:"user_id"`     // the signed-in user who started it, for bearer-token calls
	EndUserID      *string         `json:"end_user_id"` // the caller's own id for its end user
	Status         string          `json:"status"`
	Input          map[string]any  `json:"input"`
	Output         json.RawMessage `json:"output"`
	Error          *string         `json:"error"`
	Metadata       map[string]any  `json:"metadata"`
	TokenUsage     TokenUsage      `json:"token_usage"`
	Cost           float64         `json:"cost"`
	Model          *string         `json:"model"` // answered the last model call: a fallback's when the version's model failed
	DurationMS     *int64          `json:"duration_ms"`
	TraceID        string          `json:"trace_id"`
	TimeoutMS      int             `json:"timeout_ms"`
	CreatedAt      time.Time       `json:"created_at"`
	StartedAt      *time.Time      `json:"started_at"`
	CompletedAt    *time.Time      `json:"completed_at"`
	UpdatedAt      time.Time       `json:"updated_at"`
}

// Terminal reports whether the execution has reached a final status.
func (x *Execution) Terminal() bool {
	switch x.Status {
	case "completed", "failed", "cancelled", "rejected":
		return true
	}
	return false
}

// ExecutionNode is an execution with its children.
type ExecutionNode struct {
	Execution
	Children []*ExecutionNode `json:"children"`
}

// ExecuteRequest is the body of Execute.
type ExecuteRequest struct {
	Input     map[string]any `json:"input"`
	EndUserID string         `json:"end_user_id,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	Async     bool           `json:"async,omitempty"`
	VersionID string         `json:"version_id,omitempty"`
	TimeoutMS int            `json:"timeout_ms,omitempty"`
}

// PlaygroundRequest runs an unsaved configuration.
type PlaygroundRequest struct {
	Config    AgentConfig    `json:"config"`
	Input     map[string]any `json:"input"`
	EndUserID string         `json:"end_user_id,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	Async     bool           `json:"async,omitempty"`
	TimeoutMS int            `json:"timeout_ms,omitempty"`
}

// Execute runs an agent. Sync calls return the finished execution (or, past timeout_ms or
// at an approval checkpoint, the execution as it is); async calls return it pending.
func (c *Client) Execute(ctx context.Context, agentID string, in ExecuteRequest, opts ...RequestOption) (*Execution, error) {
	return send[Execution](ctx, c, http.MethodPost, "/api/v1/agents/"+pathEscape(agentID)+"/execute", in, opts...)
}

// Playground runs an unsaved configuration of an agent.
func (c *Client) Playground(ctx context.Context, agentID string, in PlaygroundRequest, opts ...RequestOption) (*Execution, error) {
	return send[Execution](ctx, c, http.MethodPost, "/api/v1/agents/"+pathEscape(agentID)+"/playground", in, opts...)
}

// ExecutionListOptions filters ExecutionList.
type ExecutionListOptions struct {
	ListOptions
	AgentID, Status, SessionID, Source, EndUserID string
	CreatedAfter, CreatedBefore                   time.Time
}

// ExecutionList lists executions, newest first.
func (c *Client) ExecutionList(ctx context.Context, o ExecutionListOptions) (*List[Execution], error) {
	q := o.values()
	setIf(q, "agent_id", o.AgentID)
	setIf(q, "status", o.Status)
	setIf(q, "session_id", o.SessionID)
	setIf(q, "source", o.Source)
	setIf(q, "end_user_id", o.EndUserID)
	setTime(q, "created_after", o.CreatedAfter)
	setTime(q, "created_before", o.CreatedBefore)
	return list[Execution](ctx, c, "/api/v1/executions", q)
}

// ExecutionGet gets an execution.
func (c *Client) ExecutionGet(ctx context.Context, id string) (*Execution, error) {
	return get[Execution](ctx, c, "/api/v1/executions/"+pathEscape(id), nil)
}

// ExecutionTree gets an execution with its nested child executions.
func (c *Client) ExecutionTree(ctx context.Context, id string) (*ExecutionNode, error) {
	return get[ExecutionNode](ctx, c, "/api/v1/executions/"+pathEscape(id)+"/tree", nil)
}

// ExecutionCancel cancels a pending, running or awaiting execution.
func (c *Client) ExecutionCancel(ctx context.Context, id string) (*Execution, error) {
	return send[Execution](ctx, c, http.MethodPost, "/api/v1/executions/"+pathEscape(id)+"/cancel", nil)
}

// ExecutionApprove approves an execution awaiting approval; it resumes.
func (c *Client) ExecutionApprove(ctx context.Context, id, comment string) (*Execution, error) {
	return send[Execution](ctx, c, http.MethodPost, "/api/v1/executions/"+pathEscape(id)+"/approve", map[string]string{"comment": comment})
}

// ExecutionDeny denies an execution awaiting approval; it ends rejected.
func (c *Client) ExecutionDeny(ctx context.Context, id, reason string) (*Execution, error) {
	return send[Execution](ctx, c, http.MethodPost, "/api/v1/executions/"+pathEscape(id)+"/deny", map[string]string{"reason": reason})
}

// Wait polls an execution until it is terminal (or awaiting approval, when stopAtApproval).
func (c *Client) Wait(ctx context.Context, id string, every time.Duration, stopAtApproval bool) (*Execution, error) {
	for {
		x, err := c.ExecutionGet(ctx, id)
		if err != nil {
			return nil, err
		}
		if x.Terminal() || stopAtApproval && x.Status == "awaiting_approval" {
			return x, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(every):
		}
	}
}

// Approval is a human decision an execution waits for.
type Approval struct {
	ID          string          `json:"id"`
	WorkspaceID string          `json:"workspace_id"`
	ExecutionID string          `json:"execution_id"`
	AgentID     string          `json:"agent_id"`
	AgentName   string          `json:"agent_name"`
	Kind        string          `json:"kind"` // checkpoint, tools or question
	Checkpoint  string          `json:"checkpoint"`
	Description string          `json:"description"`
	Awaiting    json.RawMessage `json:"awaiting"`
	// Calls are the tool calls waiting for the decision, each with its decision once decided.
	Calls       []PendingCall `json:"calls"`
	Question    string        `json:"question,omitempty"`
	Choices     []string      `json:"choices,omitempty"`
	Answer      string        `json:"answer,omitempty"`
	Status      string        `json:"status"`
	Comment     string        `json:"comment"`
	Reason      string        `json:"reason"`
	DecidedBy   string        `json:"decided_by,omitempty"`
	ExpiresAt   *time.Time    `json:"expires_at,omitempty"`
	OnTimeout   string        `json:"on_timeout,omitempty"`
	RequestedAt time.Time     `json:"requested_at"`
	DecidedAt   *time.Time    `json:"decided_at"`
}

// PendingCall is a tool call an approval holds back, and its decision once decided.
type PendingCall struct {
	CallID          string          `json:"call_id"`
	Name            string          `json:"name"`
	Arguments       json.RawMessage `json:"arguments"`
	InputSchema     json.RawMessage `json:"input_schema,omitempty"`
	Decision        string          `json:"decision,omitempty"`
	Message         string          `json:"message,omitempty"`
	EditedArguments json.RawMessage `json:"edited_arguments,omitempty"`
}

// Review decides an execution awaiting approval: Decisions per pending tool call (one
// without a decision is approved), Answer for a question.
type Review struct {
	Comment   string         `json:"comment,omitempty"`
	Decisions []CallDecision `json:"decisions,omitempty"`
	Answer    string         `json:"answer,omitempty"`
}

// CallDecision decides one pending call: "approve", "reject" (Message says why; the model
// reads it) or "edit" (Arguments, valid against the tool's input schema, replace the model's).
type CallDecision struct {
	CallID    string          `json:"call_id"`
	Decision  string          `json:"decision"`
	Message   string          `json:"message,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// ExecutionDecide resumes an execution awaiting approval as the review says.
func (c *Client) ExecutionDecide(ctx context.Context, id string, rv Review) (*Execution, error) {
	return send[Execution](ctx, c, http.MethodPost, "/api/v1/executions/"+pathEscape(id)+"/approve", rv)
}

// ApprovalList lists approvals (status "" means pending; "all" lists every status).
func (c *Client) ApprovalList(ctx context.Context, status string, o ListOptions) (*List[Approval], error) {
	q := o.values()
	setIf(q, "status", status)
	return list[Approval](ctx, c, "/api/v1/approvals", q)
}

// ExecutionApproval returns the pending approval of an execution (its pending tool calls,
// or its question); nil when it waits for none.
func (c *Client) ExecutionApproval(ctx context.Context, id string) (*Approval, error) {
	q := url.Values{"execution_id": {id}}
	l, err := list[Approval](ctx, c, "/api/v1/approvals", q)
	if err != nil || len(l.Data) == 0 {
		return nil, err
	}
	return &l.Data[0], nil
}

// ApprovalGet gets an approval.
func (c *Client) ApprovalGet(ctx context.Context, id string) (*Approval, error) {
	return get[Approval](ctx, c, "/api/v1/approvals/"+pathEscape(id), nil)
}

// Span is one timed step of a trace. In a trace of TraceGet, spans are a tree: Children
// holds the spans whose parent is this one (Trace.AllSpans flattens it).
type Span struct {
	ID          string          `json:"id"`
	TraceID     string          `json:"trace_id"`
	ParentID    *string         `json:"parent_id"`
	Name        string          `json:"name"`
	Kind        string          `json:"kind"`
	Status      string          `json:"status"`
	Model       *string         `json:"model"`
	Provider    *string         `json:"provider"`
	Input       json.RawMessage `json:"input"`
	Output      json.RawMessage `json:"output"`
	Error       *string         `json:"error"`
	Attributes  map[string]any  `json:"attributes"`
	TokenUsage  TokenUsage      `json:"token_usage"`
	Cost        float64         `json:"cost"`
	ServiceName *string         `json:"service_name"`
	StartedAt   time.Time       `json:"started_at"`
	EndedAt     *time.Time      `json:"ended_at"`
	DurationMS  *int64          `json:"duration_ms"`
	Children    []*Span         `json:"children"`
}

// Trace groups the spans of one execution, or of an ingested trace.
type Trace struct {
	ID          string         `json:"id"`
	WorkspaceID string         `json:"workspace_id"`
	ExecutionID *string        `json:"execution_id"`
	AgentID     *string        `json:"agent_id"`
	SessionID   *string        `json:"session_id"`
	EndUserID   *string        `json:"end_user_id"`
	ServiceName *string        `json:"service_name"`
	Name        string         `json:"name"`
	Status      string         `json:"status"`
	TokenUsage  TokenUsage     `json:"token_usage"`
	Cost        float64        `json:"cost"`
	DurationMS  *int64         `json:"duration_ms"`
	Metadata    map[string]any `json:"metadata"`
	StartedAt   time.Time      `json:"started_at"`
	EndedAt     *time.Time     `json:"ended_at"`
	CreatedAt   time.Time      `json:"created_at"`
	SpanCount   int            `json:"span_count"`
	// Spans are the root spans (TraceGet), each with its Children.
	Spans []*Span `json:"spans"`
}

// AllSpans returns every span of the trace's tree, depth first, parents before children.
func (t *Trace) AllSpans() []*Span {
	var out []*Span
	var walk func([]*Span)
	walk = func(spans []*Span) {
		for _, sp := range spans {
			out = append(out, sp)
			walk(sp.Children)
		}
	}
	walk(t.Spans)
	return out
}

// TraceListOptions filters TraceList.
type TraceListOptions struct {
	ListOptions
	AgentID, ExecutionID, SessionID, EndUserID, Status, ServiceName string
	CreatedAfter, CreatedBefore                                     time.Time
	// Inclusive ranges of cost (USD) and duration; nil leaves a bound out.
	MinCost, MaxCost             *float64
	MinDurationMS, MaxDurationMS *int64
}

// TraceList lists traces, newest first.
func (c *Client) TraceList(ctx context.Context, o TraceListOptions) (*List[Trace], error) {
	q := o.values()
	setIf(q, "agent_id", o.AgentID)
	setIf(q, "execution_id", o.ExecutionID)
	setIf(q, "session_id", o.SessionID)
	setIf(q, "end_user_id", o.EndUserID)
	setIf(q, "status", o.Status)
	setIf(q, "service_name", o.ServiceName)
	setTime(q, "created_after", o.CreatedAfter)
	setTime(q, "created_before", o.CreatedBefore)
	for name, v := range map[string]*float64{"min_cost": o.MinCost, "max_cost": o.MaxCost} {
		if v != nil {
			q.Set(name, strconv.FormatFloat(*v, 'f', -1, 64))
		}
	}
	for name, v := range map[string]*int64{"min_duration_ms": o.MinDurationMS, "max_duration_ms": o.MaxDurationMS} {
		if v != nil {
			q.Set(name, strconv.FormatInt(*v, 10))
		}
	}
	return list[Trace](ctx, c, "/api/v1/traces", q)
}

// TraceGet gets a trace with its spans.
func (c *Client) TraceGet(ctx context.Context, id string) (*Trace, error) {
	return get[Trace](ctx, c, "/api/v1/traces/"+pathEscape(id), nil)
}
