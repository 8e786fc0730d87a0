package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
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
func promptInput(input string) string { return `{"input":` + input + `,"prompt_id":""}` }

// SpansShareExecution marks the spans whose input or output is exactly (byte for byte) what
// the execution row stores, input and output (nil until completed), so that SpanInsert
// stores it once, on the execution: the root span's input is the run's input, and the model
// call whose answer is the run's output holds it again. A value over MaxSpanIO is never
// shared: the span keeps its cut.
func SpansShareExecution(spans []*Span, input JSONObject, output json.RawMessage) {
	in, _ := input.Value()
	inText, _ := in.(string)
	answer := modelAnswer(output)
	for _, sp := range spans {
		if len(sp.Input) > 0 && len(sp.Input) <= MaxSpanIO && string(sp.Input) == inText {
			sp.Shared |= SharedInput
		}
		if sp.Kind == "prompt" && len(sp.Input) <= MaxSpanIO && string(sp.Input) == promptInput(inText) {
			sp.Shared |= SharedPromptInput
		}
		if answer != "" && len(sp.Output) <= MaxSpanIO && string(sp.Output) == answer {
			sp.Shared |= SharedOutput
		}
	}
}

// modelAnswer is the output of a model call's span whose answer is an execution's output
// (see SharedOutput); "" when the output is not an object.
func modelAnswer(output json.RawMessage) string {
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

// bounds are the filter's range conditions (created_at, cost, duration_ms) with their
// arguments, numbered after the n arguments before them. They narrow the rows read along the
// list's index in its order: none needs an index of its own.
func (f TraceFilter) bounds(n int) (string, []any) {
	var b strings.Builder
	var args []any
	for _, c := range []struct {
		sql string
		set bool
		val any
	}{
		{" AND created_at > $%d", !f.CreatedAfter.IsZero(), f.CreatedAfter},
		{" AND created_at < $%d", !f.CreatedBefore.IsZero(), f.CreatedBefore},
		{" AND cost >= $%d", f.MinCost != nil, f.MinCost},
		{" AND cost <= $%d", f.MaxCost != nil, f.MaxCost},
		{" AND duration_ms >= $%d", f.MinDurationMS != nil, f.MinDurationMS},
		{" AND duration_ms <= $%d", f.MaxDurationMS != nil, f.MaxDurationMS},
	} {
		if c.set {
			args = append(args, c.val)
			fmt.Fprintf(&b, c.sql, n+len(args))
		}
	}
	return b.String(), args
}

// TraceCreate inserts a trace.
func (s *Store) TraceCreate(ctx context.Context, t *Trace) error {
	q, args := t.insert(Now())
	if _, err := s.exec(ctx, q, args...); err != nil {
		return fmt.Errorf("insert trace: %w", err)
	}
	return nil
}

// insert fills a new trace's defaults and returns the INSERT that stores it, with its twelve
// arguments ($1 to $12).
func (t *Trace) insert(now Time) (string, []any) {
	if t.ID == "" {
		t.ID = NewID()
	}
	if t.StartedAt.IsZero() {
		t.StartedAt = now
	}
	t.CreatedAt = now
	if t.Status == "" {
		t.Status = StatusRunning
	}
	return `INSERT INTO traces (id, workspace_id, execution_id, agent_id, session_id, end_user_id, service_name, name, status,
		metadata, started_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		[]any{t.ID, t.WorkspaceID, t.ExecutionID, t.AgentID, t.SessionID, t.EndUserID, t.ServiceName, t.Name, t.Status, t.Metadata, t.StartedAt, now}
}

// TraceFinish records a trace's outcome and totals.
func (s *Store) TraceFinish(ctx context.Context, ws, id, status string, usage TokenUsage, cost float64, ended Time, durationMS int64) error {
	_, err := s.exec(ctx, `UPDATE traces SET status = $1, prompt_tokens = $2, completion_tokens = $3, cost = $4, ended_at = $5, duration_ms = $6
		WHERE workspace_id = $7 AND id = $8`, status, usage.PromptTokens, usage.CompletionTokens, cost, ended, durationMS, ws, id)
	if err != nil {
		return fmt.Errorf("finish trace %s: %w", id, err)
	}
	return nil
}

// MaxSpanIO is how much of a span's input and output is kept: a longer JSON value is stored
// as a JSON string of its first MaxSpanIO bytes.
const MaxSpanIO = 32 << 10

// cutJSON keeps raw JSON up to MaxSpanIO bytes (nil for none or null): a longer value becomes
// a JSON string of its first MaxSpanIO bytes (of a string, of its text).
func cutJSON(raw json.RawMessage) any {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if len(raw) <= MaxSpanIO {
		return string(raw)
	}
	text := string(raw)
	var str string
	if raw[0] == '"' && json.Unmarshal(raw, &str) == nil {
		text = str // a string keeps its first bytes, not its quoted form's
	}
	if len(text) > MaxSpanIO {
		text = text[:MaxSpanIO]
	}
	for len(text) > 0 && !utf8.ValidString(text) { // never split a character
		text = text[:len(text)-1]
	}
	b, _ := json.Marshal(text)
	return string(b)
}

const spanInsertColumns = `workspace_id, trace_id, id, parent_span_id, name, kind, status, started_at, ended_at, model, provider,
	input, output, error, prompt_tokens, completion_tokens, cost, attributes, service_name, shared`

const spanColumnCount = 20

// spanChunks are the numbers of spans one INSERT writes (20 parameters each: well under both
// dialects' limits), largest first: a batch is cut into these and a rest of fewer than 16
// spans is one INSERT of its size, so that whatever its size at most 18 statement texts
// exist, each prepared once per connection and kept, and a run's few spans (three for a
// simple run) are one statement.
var spanChunks = []int{256, 64, 16}

// SpanInsert stores spans, one row each; a span already stored (same workspace, trace and
// id) is replaced. Spans without an id get one; a model call's model and provider are read
// from its attributes when the fields are not set.
func (s *Store) SpanInsert(ctx context.Context, spans []*Span) error {
	if len(spans) == 0 {
		return nil
	}
	for _, sp := range spans {
		if sp.ID == "" {
			sp.ID = NewSpanID()
		}
		if sp.Model == nil {
			if m, ok := sp.Attributes["model"].(string); ok && m != "" {
				sp.Model = &m
			}
		}
		if sp.Provider == nil {
			if p, ok := sp.Attributes["provider"].(string); ok && p != "" {
				sp.Provider = &p
			}
		}
	}
	spans = lastOfEachID(spans)
	if len(spans) < spanChunks[len(spanChunks)-1] {
		return s.spanUpsert(ctx, spans) // one statement: no transaction around it
	}
	return s.InTx(ctx, func(tx *Store) error {
		for len(spans) > 0 {
			n := len(spans) // the rest, under the smallest chunk
			for _, c := range spanChunks {
				if c <= len(spans) {
					n = c
					break
				}
			}
			if err := tx.spanUpsert(ctx, spans[:n]); err != nil {
				return err
			}
			spans = spans[n:]
		}
		return nil
	})
}

// lastOfEachID keeps, of spans sharing workspace, trace and id, the last (one statement
// cannot upsert a row twice).
func lastOfEachID(spans []*Span) []*Span {
	type key struct{ ws, trace, id string }
	seen := make(map[key]int, len(spans))
	dup := false
	for i, sp := range spans {
		k := key{sp.WorkspaceID, sp.TraceID, sp.ID}
		if _, ok := seen[k]; ok {
			dup = true
		}
		seen[k] = i
	}
	if !dup {
		return spans
	}
	out := make([]*Span, 0, len(seen))
	for i, sp := range spans {
		if seen[key{sp.WorkspaceID, sp.TraceID, sp.ID}] == i {
			out = append(out, sp)
		}
	}
	return out
}

var spanUpsertTail = ` ON CONFLICT (workspace_id, trace_id, id) DO UPDATE SET parent_span_id = excluded.parent_span_id, name = excluded.name,
	kind = excluded.kind, status = excluded.status, started_at = excluded.started_at, ended_at = excluded.ended_at, model = excluded.model,
	provider = excluded.provider, input = excluded.input, output = excluded.output, error = excluded.error,
	prompt_tokens = excluded.prompt_tokens, completion_tokens = excluded.completion_tokens, cost = excluded.cost,
	attributes = excluded.attributes, service_name = excluded.service_name, shared = excluded.shared`

func (s *Store) spanUpsert(ctx context.Context, spans []*Span) error {
	var b strings.Builder
	b.Grow(len(spanInsertColumns) + len(spans)*spanColumnCount*5 + len(spanUpsertTail) + 32)
	b.WriteString("INSERT INTO spans (" + spanInsertColumns + ") VALUES ")
	args := make([]any, 0, len(spans)*spanColumnCount)
	for i, sp := range spans {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for j := range spanColumnCount {
			if j > 0 {
				b.WriteByte(',')
			}
			if s.dialect == SQLite {
				// Anonymous parameters: modernc binds a named one ($1) by looking its name up
				// in a list, which costs quadratic time over thousands of them.
				b.WriteByte('?')
			} else {
				b.WriteByte('$')
				b.WriteString(strconv.Itoa(i*spanColumnCount + j + 1))
			}
		}
		b.WriteByte(')')
		attrs, shared := spanAttributes(sp)
		var attrText any = sp.AttributesJSON
		if sp.AttributesJSON == "" {
			var err error
			if attrText, err = attrs.Value(); err != nil {
				return fmt.Errorf("encode attributes of span %s: %w", sp.ID, err)
			}
		}
		// What the execution row holds is not stored again (see SpansShareExecution).
		in, out := cutJSON(sp.Input), cutJSON(sp.Output)
		if sp.Shared&(SharedInput|SharedPromptInput) != 0 {
			in = nil
		}
		if sp.Shared&SharedOutput != 0 {
			out = nil
		}
		args = append(args, sp.WorkspaceID, sp.TraceID, sp.ID, sp.ParentID, sp.Name, sp.Kind, sp.Status, sp.StartedAt, optTime(sp.EndedAt),
			sp.Model, sp.Provider, in, out, sp.Error, sp.TokenUsage.PromptTokens,
			sp.TokenUsage.CompletionTokens, sp.Cost, attrText, sp.ServiceName, shared)
	}
	b.WriteString(spanUpsertTail)
	if _, err := s.exec(ctx, b.String(), args...); err != nil {
		return fmt.Errorf("insert spans: %w", err)
	}
	return nil
}

// spanAttributes returns the attributes a span stores and its shared bits: a model call's
// "model" and "provider" attributes that say what its Model and Provider columns say are left
// out (SharedModel) and put back when it is read.
func spanAttributes(sp *Span) (JSONObject, SpanShared) {
	shared := sp.Shared &^ SharedModel
	m, _ := sp.Attributes["model"].(string)
	p, _ := sp.Attributes["provider"].(string)
	if sp.AttributesJSON != "" || sp.Model == nil || sp.Provider == nil || m != *sp.Model || p != *sp.Provider {
		return sp.Attributes, shared
	}
	attrs := make(JSONObject, len(sp.Attributes))
	for k, v := range sp.Attributes {
		if k != "model" && k != "provider" {
			attrs[k] = v
		}
	}
	return attrs, shared | SharedModel
}

// SpanIngest stores ingested spans (see SpanInsert) of any number of traces and creates or
// updates each trace's row in the same transaction: its name (the root span's), agent,
// session, end user and service name (from the spans that say them), and its totals over all
// its stored spans: status (failed when a span is an error), start, end, duration, and the
// tokens and cost of its model calls (spans of kind llm and embedding). A trace of an
// execution keeps the execution's row.
func (s *Store) SpanIngest(ctx context.Context, ws string, spans []*Span) error {
	if len(spans) == 0 {
		return nil
	}
	metas := map[string]*traceMeta{}
	var order []string
	for _, sp := range spans {
		sp.WorkspaceID = ws
		m := metas[sp.TraceID]
		if m == nil {
			m = &traceMeta{name: sp.Name}
			metas[sp.TraceID] = m
			order = append(order, sp.TraceID)
		}
		if sp.ParentID == nil && !m.root {
			m.name, m.root = sp.Name, true
		}
		setFirst(&m.agent, sp.TraceAgentID)
		setFirst(&m.session, sp.TraceSessionID)
		setFirst(&m.endUser, sp.TraceEndUserID)
		if sp.ServiceName != nil {
			setFirst(&m.service, *sp.ServiceName)
		}
	}
	// The triggers of migration 00020 update the rollup rows of each trace, in the order of the
	// traces: two batches holding traces of the same agents in another order can deadlock on
	// PostgreSQL, which aborts one; that one is run again (its own transaction only).
	for attempt := 1; ; attempt++ {
		err := s.spanIngestTx(ctx, ws, spans, metas, order)
		if s.inTx || attempt == 3 || !isDeadlock(err) {
			return err
		}
	}
}

// traceMeta is what a batch of ingested spans says of one trace.
type traceMeta struct {
	name                             string
	root                             bool
	agent, session, endUser, service *string
}

func (s *Store) spanIngestTx(ctx context.Context, ws string, spans []*Span, metas map[string]*traceMeta, order []string) error {
	return s.InTx(ctx, func(tx *Store) error {
		if err := tx.SpanInsert(ctx, spans); err != nil {
			return err
		}
		now := Now()
		for _, id := range order {
			m := metas[id]
			_, err := tx.exec(ctx, `INSERT INTO traces (id, workspace_id, agent_id, session_id, end_user_id, service_name, name, status, metadata,
				started_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, 'completed', '{"source":"ingest"}', $8, $8)
				ON CONFLICT (workspace_id, id) DO UPDATE SET
				agent_id = coalesce(excluded.agent_id, traces.agent_id), session_id = coalesce(excluded.session_id, traces.session_id),
				end_user_id = coalesce(excluded.end_user_id, traces.end_user_id), service_name = coalesce(excluded.service_name, traces.service_name),
				name = CASE WHEN $9 THEN excluded.name ELSE traces.name END
				WHERE traces.execution_id IS NULL`,
				id, ws, m.agent, m.session, m.endUser, m.service, m.name, now, m.root)
			if err != nil {
				return fmt.Errorf("upsert trace %s: %w", id, err)
			}
			_, err = tx.exec(ctx, `UPDATE traces SET (status, prompt_tokens, completion_tokens, cost, started_at, ended_at, duration_ms, created_at) =
				(SELECT CASE WHEN sum(CASE WHEN status = 'error' THEN 1 ELSE 0 END) > 0 THEN 'failed' ELSE 'completed' END,
					coalesce(sum(CASE WHEN kind IN ('llm', 'embedding') THEN prompt_tokens ELSE 0 END), 0),
					coalesce(sum(CASE WHEN kind IN ('llm', 'embedding') THEN completion_tokens ELSE 0 END), 0),
					coalesce(sum(CASE WHEN kind IN ('llm', 'embedding') THEN cost ELSE 0 END), 0),
					min(started_at), max(ended_at), max(ended_at) - min(started_at), min(started_at)
				FROM spans WHERE workspace_id = $1 AND trace_id = $2)
				WHERE workspace_id = $1 AND id = $2 AND execution_id IS NULL`, ws, id)
			if err != nil {
				return fmt.Errorf("total trace %s: %w", id, err)
			}
		}
		return nil
	})
}

func setFirst(dst **string, v string) {
	if *dst == nil && v != "" {
		*dst = &v
	}
}

const spanColumns = `trace_id, id, workspace_id, parent_span_id, name, kind, status, model, provider, input, output, error,
	attributes, prompt_tokens, completion_tokens, cost, service_name, started_at, ended_at, shared`

func scanSpan(row interface{ Scan(...any) error }) (*Span, error) {
	var sp Span
	var in, out sql.NullString
	var ended Time
	if err := row.Scan(&sp.TraceID, &sp.ID, &sp.WorkspaceID, &sp.ParentID, &sp.Name, &sp.Kind, &sp.Status, &sp.Model, &sp.Provider,
		&in, &out, &sp.Error, &sp.Attributes, &sp.TokenUsage.PromptTokens, &sp.TokenUsage.CompletionTokens, &sp.Cost,
		&sp.ServiceName, &sp.StartedAt, &ended, &sp.Shared); err != nil {
		return nil, err
	}
	if in.Valid {
		sp.Input = json.RawMessage(in.String)
	}
	if out.Valid {
		sp.Output = json.RawMessage(out.String)
	}
	if sp.Shared&SharedModel != 0 && sp.Model != nil && sp.Provider != nil {
		if sp.Attributes == nil {
			sp.Attributes = JSONObject{}
		}
		sp.Attributes["model"], sp.Attributes["provider"] = *sp.Model, *sp.Provider
	}
	sp.TokenUsage.TotalTokens = sp.TokenUsage.PromptTokens + sp.TokenUsage.CompletionTokens
	if !ended.IsZero() {
		sp.EndedAt = &ended
		d := ended.Sub(sp.StartedAt.Time).Milliseconds()
		sp.DurationMS = &d
	}
	return &sp, nil
}

// SpanGet returns one span of a trace of the workspace.
func (s *Store) SpanGet(ctx context.Context, ws, traceID, spanID string) (*Span, error) {
	sp, err := scanSpan(s.r.QueryRowContext(ctx, "SELECT "+spanColumns+" FROM spans WHERE workspace_id = $1 AND trace_id = $2 AND id = $3",
		ws, traceID, spanID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("span", spanID)
	}
	if err != nil {
		return nil, fmt.Errorf("get span %s: %w", spanID, err)
	}
	if err := s.spansFillShared(ctx, ws, traceID, []*Span{sp}); err != nil {
		return nil, err
	}
	return sp, nil
}

// spansFillShared sets the input and output that spans of a trace share with its execution
// (see SpansShareExecution) from the execution row, read only when one of them needs it.
func (s *Store) spansFillShared(ctx context.Context, ws, traceID string, spans []*Span) error {
	if !slices.ContainsFunc(spans, func(sp *Span) bool { return sp.Shared&^SharedModel != 0 }) {
		return nil
	}
	var input string
	var output sql.NullString
	err := s.r.QueryRowContext(ctx, `SELECT e.input, e.output FROM traces t JOIN executions e ON e.id = t.execution_id
		WHERE t.workspace_id = $1 AND t.id = $2`, ws, traceID).Scan(&input, &output)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // the execution is gone: what it shared with its spans went with it
	}
	if err != nil {
		return fmt.Errorf("read the execution of trace %s: %w", traceID, err)
	}
	answer := modelAnswer(json.RawMessage(output.String))
	for _, sp := range spans {
		if sp.Shared&SharedInput != 0 {
			sp.Input = json.RawMessage(input)
		}
		if sp.Shared&SharedPromptInput != 0 {
			sp.Input = json.RawMessage(promptInput(input))
		}
		if sp.Shared&SharedOutput != 0 && answer != "" {
			sp.Output = json.RawMessage(answer)
		}
	}
	return nil
}

func nullJSON(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return string(raw)
}

const traceColumns = `id, workspace_id, execution_id, agent_id, session_id, end_user_id, service_name, name, status, prompt_tokens,
	completion_tokens, cost, duration_ms, metadata, started_at, ended_at, created_at`

func scanTrace(row interface{ Scan(...any) error }) (*Trace, error) {
	var t Trace
	var ended Time
	if err := row.Scan(&t.ID, &t.WorkspaceID, &t.ExecutionID, &t.AgentID, &t.SessionID, &t.EndUserID, &t.ServiceName, &t.Name, &t.Status,
		&t.TokenUsage.PromptTokens, &t.TokenUsage.CompletionTokens, &t.Cost, &t.DurationMS, &t.Metadata, &t.StartedAt, &ended, &t.CreatedAt); err != nil {
		return nil, err
	}
	t.TokenUsage.TotalTokens = t.TokenUsage.PromptTokens + t.TokenUsage.CompletionTokens
	if !ended.IsZero() {
		t.EndedAt = &ended
	}
	return &t, nil
}

// TraceList returns one page of traces, newest first.
func (s *Store) TraceList(ctx context.Context, ws string, f TraceFilter, p Page) ([]*Trace, int, error) {
	// An execution's trace is the one its row names, found by the execution's key (traces need
	// no index of their execution_id).
	where, args := whereClause("", ws, []cond{{"agent_id = $%d", f.AgentID},
		{"id = (SELECT trace_id FROM executions WHERE workspace_id = $1 AND id = $%d)", f.ExecutionID},
		{"session_id = $%d", f.SessionID}, {"end_user_id = $%d", f.EndUserID}, {"status = $%d", f.Status},
		{"service_name = $%d", f.ServiceName}})
	bounds, bargs := f.bounds(len(args))
	where += bounds
	args = append(args, bargs...)
	q, qargs := pagedSelect(traceColumns, "traces", where, args, p)
	rows, err := s.r.QueryContext(ctx, q, qargs...)
	if err != nil {
		return nil, 0, fmt.Errorf("list traces: %w", err)
	}
	items, err := collect(rows, scanTrace)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.listCount(ctx, p, len(items), "traces"+where+newestFirst, args)
	return items, total, err
}

// TraceGet returns a trace with its spans in start order.
func (s *Store) TraceGet(ctx context.Context, ws, id string) (*Trace, error) {
	t, err := scanTrace(s.r.QueryRowContext(ctx, "SELECT "+traceColumns+" FROM traces WHERE workspace_id = $1 AND id = $2", ws, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("trace", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get trace %s: %w", id, err)
	}
	rows, err := s.r.QueryContext(ctx, "SELECT "+spanColumns+" FROM spans WHERE workspace_id = $1 AND trace_id = $2 ORDER BY started_at, id", ws, id)
	if err != nil {
		return nil, fmt.Errorf("list spans of %s: %w", id, err)
	}
	if t.Spans, err = collect(rows, scanSpan); err != nil {
		return nil, fmt.Errorf("list spans of %s: %w", id, err)
	}
	if err := s.spansFillShared(ctx, ws, id, t.Spans); err != nil {
		return nil, err
	}
	return t, nil
}

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
