package client

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// Execute runs an agent. Sync calls return the finished execution (or, past timeout_ms or
// at an approval checkpoint, the execution as it is); async calls return it pending.
func (c *Client) Execute(ctx context.Context, agentID string, in ExecuteRequest, opts ...RequestOption) (*Execution, error) {
	return send[Execution](ctx, c, http.MethodPost, "/api/v1/agents/"+pathEscape(agentID)+"/execute", in, opts...)
}

// Playground runs an unsaved configuration of an agent.
func (c *Client) Playground(ctx context.Context, agentID string, in PlaygroundRequest, opts ...RequestOption) (*Execution, error) {
	return send[Execution](ctx, c, http.MethodPost, "/api/v1/agents/"+pathEscape(agentID)+"/playground", in, opts...)
}

// ExecutionList lists executions, newest first.
func (c *Client) ExecutionList(ctx context.Context, o ListExecutionsParams) (*List[Execution], error) {
	return list[Execution](ctx, c, "/api/v1/executions", query(o))
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

// ExecutionDecide resumes an execution awaiting approval as the review says.
func (c *Client) ExecutionDecide(ctx context.Context, id string, rv ApproveRequest) (*Execution, error) {
	return send[Execution](ctx, c, http.MethodPost, "/api/v1/executions/"+pathEscape(id)+"/approve", rv)
}

// ApprovalList lists approvals (o.Status "" means pending; "all" lists every status).
func (c *Client) ApprovalList(ctx context.Context, o ListApprovalsParams) (*List[Approval], error) {
	return list[Approval](ctx, c, "/api/v1/approvals", query(o))
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

// TraceList lists traces, newest first.
func (c *Client) TraceList(ctx context.Context, o ListTracesParams) (*List[Trace], error) {
	return list[Trace](ctx, c, "/api/v1/traces", query(o))
}

// TraceGet gets a trace with its spans.
func (c *Client) TraceGet(ctx context.Context, id string) (*TraceDetail, error) {
	return get[TraceDetail](ctx, c, "/api/v1/traces/"+pathEscape(id), nil)
}

// Terminal reports whether the execution has reached a final status.
func (x *Execution) Terminal() bool {
	switch x.Status {
	case ExecutionStatusCompleted, ExecutionStatusFailed, ExecutionStatusCancelled, ExecutionStatusRejected:
		return true
	}
	return false
}

// AllSpans returns every span of the trace's tree, depth first, parents before children.
func (t *TraceDetail) AllSpans() []*SpanNode {
	var out []*SpanNode
	var walk func([]SpanNode)
	walk = func(spans []SpanNode) {
		for i := range spans {
			out = append(out, &spans[i])
			walk(spans[i].Children)
		}
	}
	walk(t.Spans)
	return out
}
