package domain

import (
	"encoding/json"
	"slices"
)

// Trace groups the spans of one execution, or of a trace ingested by an SDK or OTLP exporter
// (then its id is the exporter's, 32 hex digits for OTLP, and its totals are its spans').
type Trace struct {
	ID          string     `json:"id"`
	WorkspaceID string     `json:"workspace_id"`
	ExecutionID *string    `json:"execution_id"`
	AgentID     *string    `json:"agent_id"`
	SessionID   *string    `json:"session_id"`
	EndUserID   *string    `json:"end_user_id" doc:"The caller's own id for its end user: the execution's, or an ingested span's user.id / enduser.id attribute."`
	ServiceName *string    `json:"service_name" doc:"An ingested trace's resource service.name; null for executions."`
	Name        string     `json:"name"`
	Status      string     `json:"status" enum:"pending,running,completed,failed,cancelled,awaiting_approval,rejected" doc:"The status of the trace's execution; an ingested trace is failed when one of its spans is an error, else completed."`
	TokenUsage  TokenUsage `json:"token_usage"`
	Cost        float64    `json:"cost"`
	DurationMS  *int64     `json:"duration_ms"`
	Metadata    JSONObject `json:"metadata"`
	StartedAt   Time       `json:"started_at"`
	EndedAt     *Time      `json:"ended_at"`
	CreatedAt   Time       `json:"created_at"`
	// Spans are the trace's spans in start order (TraceGet); the API sends them as a tree.
	Spans []*Span `json:"-"`
}

// Span kinds. The runtime writes the first eleven; ingested spans may also be embedding or the
// generic span.
var SpanKinds = []string{"agent", "prompt", "llm", "tool", "guardrail", "history", "approval", "validation", "step", "subagent", "memory", "embedding", "span"}

// Span statuses.
var SpanStatuses = []string{"ok", "error"}

// Span is one timed step of a trace: prompt rendering, a model call, a tool call, a
// guardrail check, history trimming, an approval wait, a sub-agent, memories retrieved or
// stored, or an ingested span.
type Span struct {
	ID          string          `json:"id"`
	TraceID     string          `json:"trace_id"`
	WorkspaceID string          `json:"workspace_id"`
	ParentID    *string         `json:"parent_id"`
	Name        string          `json:"name"`
	Kind        string          `json:"kind" enum:"agent,prompt,llm,tool,guardrail,history,approval,validation,step,subagent,memory,embedding,span"`
	Status      string          `json:"status" enum:"ok,error"`
	Model       *string         `json:"model" doc:"The model called (gen_ai.response.model, else gen_ai.request.model, for ingested spans)."`
	Provider    *string         `json:"provider" doc:"The model's provider (gen_ai.provider.name or gen_ai.system for ingested spans)."`
	Input       json.RawMessage `json:"input" doc:"JSON; a value over 32 KiB is kept as a string of its first 32 KiB."`
	Output      json.RawMessage `json:"output" doc:"JSON; a value over 32 KiB is kept as a string of its first 32 KiB."`
	Error       *string         `json:"error"`
	Attributes  JSONObject      `json:"attributes"`
	TokenUsage  TokenUsage      `json:"token_usage"`
	Cost        float64         `json:"cost"`
	ServiceName *string         `json:"service_name"`
	StartedAt   Time            `json:"started_at"`
	EndedAt     *Time           `json:"ended_at"`
	DurationMS  *int64          `json:"duration_ms"`

	// What an ingested span says of its trace (read by SpanIngest, never stored on the span).
	TraceAgentID, TraceSessionID, TraceEndUserID string `json:"-"`
	// AttributesJSON, when set, is what is stored for the attributes (a JSON object written by
	// the caller, faster than encoding Attributes); Attributes is then not read.
	AttributesJSON string `json:"-"`
	// Shared says which of Input and Output are its execution's, stored once on the execution
	// row and read from it (see SpansShareExecution).
	Shared SpanShared `json:"-"`
}

// SpanShared says which of a span's input and output are its execution's own (bits).
type SpanShared uint8

const (
	// SharedInput: the span's input is the execution's input.
	SharedInput SpanShared = 1
	// SharedOutput: the span's output is a model call's answer that became the execution's
	// output: the output's object with "tool_calls":null added at its end.
	SharedOutput SpanShared = 2
	// SharedPromptInput: the span's input is a rendered prompt's, without a prompt template:
	// `{"input":` + the execution's input + `,"prompt_id":""}`.
	SharedPromptInput SpanShared = 4
	// SharedModel: the span's attributes "model" and "provider" are its Model and Provider,
	// stored once, in those columns (set by SpanInsert).
	SharedModel SpanShared = 8
)

// promptInput is the input of a prompt span that renders no template (see SharedPromptInput).
func PromptInput(input string) string { return `{"input":` + input + `,"prompt_id":""}` }

// SpansShareExecution marks the spans whose input or output is exactly (byte for byte) what
// the execution row stores, input and output (nil until completed), so that SpanInsert
// stores it once, on the execution: the root span's input is the run's input, and the model
// call whose answer is the run's output holds it again. A value over MaxSpanIO is never
// shared: the span keeps its cut.
func SpansShareExecution(spans []*Span, input JSONObject, output json.RawMessage) {
	in, _ := input.Value()
	inText, _ := in.(string)
	answer := ModelAnswer(output)
	for _, sp := range spans {
		if len(sp.Input) > 0 && len(sp.Input) <= MaxSpanIO && string(sp.Input) == inText {
			sp.Shared |= SharedInput
		}
		if sp.Kind == "prompt" && len(sp.Input) <= MaxSpanIO && string(sp.Input) == PromptInput(inText) {
			sp.Shared |= SharedPromptInput
		}
		if answer != "" && len(sp.Output) <= MaxSpanIO && string(sp.Output) == answer {
			sp.Shared |= SharedOutput
		}
	}
}

// modelAnswer is the output of a model call's span whose answer is an execution's output
// (see SharedOutput); "" when the output is not an object.
func ModelAnswer(output json.RawMessage) string {
	n := len(output)
	if n < 2 || output[0] != '{' || output[n-1] != '}' {
		return ""
	}
	if n == 2 {
		return `{"tool_calls":null}`
	}
	return string(output[:n-1]) + `,"tool_calls":null}`
}

// SpanNode is a span with its children, for the tree of GET /traces/{id}.
type SpanNode struct {
	*Span
	Children []*SpanNode `json:"children" doc:"The spans whose parent is this one, in start order."`
}

// SpanTree nests spans (in start order) under their parents; a span whose parent is not
// among them is a root, and so is the first span (in start order) of a cycle of parent links
// (ingested spans may hold any). It takes time linear in the number of spans.
func SpanTree(spans []*Span) []*SpanNode {
	nodes := make(map[string]*SpanNode, len(spans))
	for _, sp := range spans {
		nodes[sp.ID] = &SpanNode{Span: sp, Children: []*SpanNode{}}
	}
	parentOf := func(n *SpanNode) *SpanNode {
		if n.ParentID == nil || *n.ParentID == n.ID {
			return nil
		}
		return nodes[*n.ParentID]
	}
	roots := []*SpanNode{}
	for _, sp := range spans {
		n := nodes[sp.ID]
		if p := parentOf(n); p != nil {
			p.Children = append(p.Children, n)
		} else {
			roots = append(roots, n)
		}
	}
	// Spans not reachable from a root sit on cycles: cut each cycle at its first span.
	seen := make(map[*SpanNode]bool, len(nodes))
	mark := func(n *SpanNode) {
		stack := []*SpanNode{n}
		for len(stack) > 0 {
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[top] {
				continue
			}
			seen[top] = true
			stack = append(stack, top.Children...)
		}
	}
	for _, r := range roots {
		mark(r)
	}
	cut := false
	for _, sp := range spans {
		n := nodes[sp.ID]
		if seen[n] {
			continue
		}
		p := parentOf(n)
		for i, c := range p.Children {
			if c == n {
				p.Children = append(p.Children[:i:i], p.Children[i+1:]...)
				break
			}
		}
		roots = append(roots, n)
		mark(n)
		cut = true
	}
	if cut { // keep the roots in start order
		pos := make(map[*SpanNode]int, len(roots))
		for i, sp := range spans {
			if n := nodes[sp.ID]; n.Span == sp {
				pos[n] = i
			}
		}
		slices.SortStableFunc(roots, func(x, y *SpanNode) int { return pos[x] - pos[y] })
	}
	return roots
}

// TraceFilter narrows TraceList. The ranges are inclusive; nil leaves a bound out.
type TraceFilter struct {
	AgentID, ExecutionID, SessionID, EndUserID, Status, ServiceName string
	CreatedAfter, CreatedBefore                                     Time
	MinCost, MaxCost                                                *float64
	MinDurationMS, MaxDurationMS                                    *int64
}

// MaxSpanIO is how much of a span's input and output is kept: a longer JSON value is stored
// as a JSON string of its first MaxSpanIO bytes.
const MaxSpanIO = 32 << 10

// Latency holds latency percentiles in milliseconds (null when no run of the bucket ended).
type Latency struct {
	P50 *float64 `json:"p50"`
	P95 *float64 `json:"p95"`
	P99 *float64 `json:"p99"`
}

// TraceBucket is the summary of one agent's traces started in one time bucket.
type TraceBucket struct {
	AgentID     *string    `json:"agent_id" doc:"null for traces of no agent (ingested without an agent id)."`
	BucketStart Time       `json:"bucket_start" doc:"Start of the bucket (UTC hour or day)."`
	Runs        int64      `json:"runs"`
	Errors      int64      `json:"errors" doc:"Runs that failed."`
	ErrorRate   float64    `json:"error_rate" doc:"errors / runs, from 0 to 1."`
	TokenUsage  TokenUsage `json:"token_usage"`
	Cost        float64    `json:"cost"`
	LatencyMS   Latency    `json:"latency_ms" doc:"Percentiles (linear interpolation, as PostgreSQL's percentile_cont, within 0.5 %: from a DDSketch) of the duration of the runs that ended."`
}
