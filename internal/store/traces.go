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

	"github.com/agentplane/agentplane/internal/domain"
)

// bounds are the filter's range conditions (created_at, cost, duration_ms) with their
// arguments, numbered after the n arguments before them. They narrow the rows read along the
// list's index in its order: none needs an index of its own.
func traceFilterBounds(f domain.TraceFilter, n int) (string, []any) {
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
func (s *Store) TraceCreate(ctx context.Context, t *domain.Trace) error {
	q, args := traceInsert(t, domain.Now())
	if _, err := s.exec(ctx, q, args...); err != nil {
		return fmt.Errorf("insert trace: %w", err)
	}
	return nil
}

// insert fills a new trace's defaults and returns the INSERT that stores it, with its twelve
// arguments ($1 to $12).
func traceInsert(t *domain.Trace, now domain.Time) (string, []any) {
	if t.ID == "" {
		t.ID = NewID()
	}
	if t.StartedAt.IsZero() {
		t.StartedAt = now
	}
	t.CreatedAt = now
	if t.Status == "" {
		t.Status = domain.StatusRunning
	}
	return `INSERT INTO traces (id, workspace_id, execution_id, agent_id, session_id, end_user_id, service_name, name, status,
		metadata, started_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		[]any{t.ID, t.WorkspaceID, t.ExecutionID, t.AgentID, t.SessionID, t.EndUserID, t.ServiceName, t.Name, t.Status, t.Metadata, t.StartedAt, now}
}

// TraceFinish records a trace's outcome and totals.
func (s *Store) TraceFinish(ctx context.Context, ws, id, status string, usage domain.TokenUsage, cost float64, ended domain.Time, durationMS int64) error {
	_, err := s.exec(ctx, `UPDATE traces SET status = $1, prompt_tokens = $2, completion_tokens = $3, cost = $4, ended_at = $5, duration_ms = $6
		WHERE workspace_id = $7 AND id = $8`, status, usage.PromptTokens, usage.CompletionTokens, cost, ended, durationMS, ws, id)
	if err != nil {
		return fmt.Errorf("finish trace %s: %w", id, err)
	}
	return nil
}

// cutJSON keeps raw JSON up to MaxSpanIO bytes (nil for none or null): a longer value becomes
// a JSON string of its first MaxSpanIO bytes (of a string, of its text).
func cutJSON(raw json.RawMessage) any {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if len(raw) <= domain.MaxSpanIO {
		return string(raw)
	}
	text := string(raw)
	var str string
	if raw[0] == '"' && json.Unmarshal(raw, &str) == nil {
		text = str // a string keeps its first bytes, not its quoted form's
	}
	if len(text) > domain.MaxSpanIO {
		text = text[:domain.MaxSpanIO]
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
func (s *Store) SpanInsert(ctx context.Context, spans []*domain.Span) error {
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
func lastOfEachID(spans []*domain.Span) []*domain.Span {
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
	out := make([]*domain.Span, 0, len(seen))
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

func (s *Store) spanUpsert(ctx context.Context, spans []*domain.Span) error {
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
		if sp.Shared&(domain.SharedInput|domain.SharedPromptInput) != 0 {
			in = nil
		}
		if sp.Shared&domain.SharedOutput != 0 {
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
func spanAttributes(sp *domain.Span) (domain.JSONObject, domain.SpanShared) {
	shared := sp.Shared &^ domain.SharedModel
	m, _ := sp.Attributes["model"].(string)
	p, _ := sp.Attributes["provider"].(string)
	if sp.AttributesJSON != "" || sp.Model == nil || sp.Provider == nil || m != *sp.Model || p != *sp.Provider {
		return sp.Attributes, shared
	}
	attrs := make(domain.JSONObject, len(sp.Attributes))
	for k, v := range sp.Attributes {
		if k != "model" && k != "provider" {
			attrs[k] = v
		}
	}
	return attrs, shared | domain.SharedModel
}

// SpanIngest stores ingested spans (see SpanInsert) of any number of traces and creates or
// updates each trace's row in the same transaction: its name (the root span's), agent,
// session, end user and service name (from the spans that say them), and its totals over all
// its stored spans: status (failed when a span is an error), start, end, duration, and the
// tokens and cost of its model calls (spans of kind llm and embedding). A trace of an
// execution keeps the execution's row.
func (s *Store) SpanIngest(ctx context.Context, ws string, spans []*domain.Span) error {
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

func (s *Store) spanIngestTx(ctx context.Context, ws string, spans []*domain.Span, metas map[string]*traceMeta, order []string) error {
	return s.InTx(ctx, func(tx *Store) error {
		if err := tx.SpanInsert(ctx, spans); err != nil {
			return err
		}
		now := domain.Now()
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

func scanSpan(row interface{ Scan(...any) error }) (*domain.Span, error) {
	var sp domain.Span
	var in, out sql.NullString
	var ended domain.Time
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
	if sp.Shared&domain.SharedModel != 0 && sp.Model != nil && sp.Provider != nil {
		if sp.Attributes == nil {
			sp.Attributes = domain.JSONObject{}
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
func (s *Store) SpanGet(ctx context.Context, ws, traceID, spanID string) (*domain.Span, error) {
	sp, err := scanSpan(s.r.QueryRowContext(ctx, "SELECT "+spanColumns+" FROM spans WHERE workspace_id = $1 AND trace_id = $2 AND id = $3",
		ws, traceID, spanID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("span", spanID)
	}
	if err != nil {
		return nil, fmt.Errorf("get span %s: %w", spanID, err)
	}
	if err := s.spansFillShared(ctx, ws, traceID, []*domain.Span{sp}); err != nil {
		return nil, err
	}
	return sp, nil
}

// spansFillShared sets the input and output that spans of a trace share with its execution
// (see SpansShareExecution) from the execution row, read only when one of them needs it.
func (s *Store) spansFillShared(ctx context.Context, ws, traceID string, spans []*domain.Span) error {
	if !slices.ContainsFunc(spans, func(sp *domain.Span) bool { return sp.Shared&^domain.SharedModel != 0 }) {
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
	answer := domain.ModelAnswer(json.RawMessage(output.String))
	for _, sp := range spans {
		if sp.Shared&domain.SharedInput != 0 {
			sp.Input = json.RawMessage(input)
		}
		if sp.Shared&domain.SharedPromptInput != 0 {
			sp.Input = json.RawMessage(domain.PromptInput(input))
		}
		if sp.Shared&domain.SharedOutput != 0 && answer != "" {
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

func scanTrace(row interface{ Scan(...any) error }) (*domain.Trace, error) {
	var t domain.Trace
	var ended domain.Time
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
func (s *Store) TraceList(ctx context.Context, ws string, f domain.TraceFilter, p domain.Page) ([]*domain.Trace, int, error) {
	// An execution's trace is the one its row names, found by the execution's key (traces need
	// no index of their execution_id).
	where, args := whereClause("", ws, []cond{{"agent_id = $%d", f.AgentID},
		{"id = (SELECT trace_id FROM executions WHERE workspace_id = $1 AND id = $%d)", f.ExecutionID},
		{"session_id = $%d", f.SessionID}, {"end_user_id = $%d", f.EndUserID}, partialCond("status", f.Status, domain.StatusCompleted),
		{"service_name = $%d", f.ServiceName}})
	bounds, bargs := traceFilterBounds(f, len(args))
	where += bounds
	args = append(args, bargs...)
	return listPage(ctx, s, "traces", traceColumns, where, args, newestFirst, p, scanTrace)
}

// TraceGet returns a trace with its spans in start order.
func (s *Store) TraceGet(ctx context.Context, ws, id string) (*domain.Trace, error) {
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
