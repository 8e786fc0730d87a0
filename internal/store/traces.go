package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Trace groups the spans of one execution (or of an ingested SDK trace).
type Trace struct {
	ID          string     `json:"id"`
	WorkspaceID string     `json:"workspace_id"`
	ExecutionID *string    `json:"execution_id"`
	AgentID     *string    `json:"agent_id"`
	SessionID   *string    `json:"session_id"`
	Name        string     `json:"name"`
	Status      string     `json:"status"`
	TokenUsage  TokenUsage `json:"token_usage"`
	Cost        float64    `json:"cost"`
	DurationMS  *int64     `json:"duration_ms"`
	Metadata    JSONObject `json:"metadata"`
	StartedAt   Time       `json:"started_at"`
	EndedAt     *Time      `json:"ended_at"`
	CreatedAt   Time       `json:"created_at"`
	Spans       []*Span    `json:"spans,omitempty" doc:"Present on GET /traces/{id}, ordered by start time."`
}

// Span is one timed step of a trace: prompt rendering, a model call, a tool call, a
// guardrail check, history trimming, an approval wait, a sub-agent.
type Span struct {
	ID          string          `json:"id"`
	TraceID     string          `json:"trace_id"`
	WorkspaceID string          `json:"workspace_id"`
	ParentID    *string         `json:"parent_id"`
	Name        string          `json:"name"`
	Kind        string          `json:"kind" enum:"agent,prompt,llm,tool,guardrail,history,approval,validation,step,subagent"`
	Status      string          `json:"status" enum:"ok,error"`
	Input       json.RawMessage `json:"input"`
	Output      json.RawMessage `json:"output"`
	Error       *string         `json:"error"`
	Attributes  JSONObject      `json:"attributes"`
	TokenUsage  TokenUsage      `json:"token_usage"`
	Cost        float64         `json:"cost"`
	StartedAt   Time            `json:"started_at"`
	EndedAt     *Time           `json:"ended_at"`
	DurationMS  *int64          `json:"duration_ms"`
}

// TraceFilter narrows TraceList.
type TraceFilter struct{ AgentID, ExecutionID, SessionID string }

// TraceCreate inserts a trace.
func (s *Store) TraceCreate(ctx context.Context, t *Trace) error {
	if t.ID == "" {
		t.ID = NewID()
	}
	now := Now()
	if t.StartedAt.IsZero() {
		t.StartedAt = now
	}
	t.CreatedAt = now
	if t.Status == "" {
		t.Status = StatusRunning
	}
	_, err := s.exec(ctx, `INSERT INTO traces (id, workspace_id, execution_id, agent_id, session_id, name, status, metadata, started_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		t.ID, t.WorkspaceID, t.ExecutionID, t.AgentID, t.SessionID, t.Name, t.Status, t.Metadata, t.StartedAt, now)
	if err != nil {
		return fmt.Errorf("insert trace: %w", err)
	}
	return nil
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

// SpanInsert stores finished spans.
func (s *Store) SpanInsert(ctx context.Context, spans []*Span) error {
	const cols = 16
	for len(spans) > 0 {
		n := min(len(spans), 50)
		var b strings.Builder
		b.WriteString(`INSERT INTO spans (id, trace_id, workspace_id, parent_id, name, kind, status, input, output, error, attributes,
			prompt_tokens, completion_tokens, cost, started_at, ended_at, duration_ms) VALUES `)
		args := make([]any, 0, n*(cols+1))
		for i, sp := range spans[:n] {
			if sp.ID == "" {
				sp.ID = NewID()
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('(')
			for j := range cols + 1 {
				if j > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "$%d", len(args)+j+1)
			}
			b.WriteByte(')')
			args = append(args, sp.ID, sp.TraceID, sp.WorkspaceID, sp.ParentID, sp.Name, sp.Kind, sp.Status, nullJSON(sp.Input),
				nullJSON(sp.Output), sp.Error, sp.Attributes, sp.TokenUsage.PromptTokens, sp.TokenUsage.CompletionTokens, sp.Cost,
				sp.StartedAt, optTime(sp.EndedAt), sp.DurationMS)
		}
		if _, err := s.exec(ctx, b.String(), args...); err != nil {
			return fmt.Errorf("insert spans: %w", err)
		}
		spans = spans[n:]
	}
	return nil
}

func nullJSON(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return string(raw)
}

const traceColumns = `id, workspace_id, execution_id, agent_id, session_id, name, status, prompt_tokens, completion_tokens, cost,
	duration_ms, metadata, started_at, ended_at, created_at`

func scanTrace(row interface{ Scan(...any) error }) (*Trace, error) {
	var t Trace
	var ended Time
	if err := row.Scan(&t.ID, &t.WorkspaceID, &t.ExecutionID, &t.AgentID, &t.SessionID, &t.Name, &t.Status,
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
	where, args := whereClause("", ws, []cond{{"agent_id = $%d", f.AgentID}, {"execution_id = $%d", f.ExecutionID}, {"session_id = $%d", f.SessionID}})
	rows, err := s.r.QueryContext(ctx, "SELECT "+traceColumns+" FROM traces"+where+pageClause("", p), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list traces: %w", err)
	}
	items, err := collect(rows, scanTrace)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.listCount(ctx, p, len(items), "SELECT count(*) FROM traces"+where, args)
	return items, total, err
}

// TraceGet returns a trace with its spans.
func (s *Store) TraceGet(ctx context.Context, ws, id string) (*Trace, error) {
	t, err := scanTrace(s.r.QueryRowContext(ctx, "SELECT "+traceColumns+" FROM traces WHERE workspace_id = $1 AND id = $2", ws, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("trace", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get trace %s: %w", id, err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, trace_id, workspace_id, parent_id, name, kind, status, input, output, error, attributes,
		prompt_tokens, completion_tokens, cost, started_at, ended_at, duration_ms FROM spans WHERE trace_id = $1 ORDER BY started_at, id`, id)
	if err != nil {
		return nil, fmt.Errorf("list spans of %s: %w", id, err)
	}
	t.Spans, err = collect(rows, func(row interface{ Scan(...any) error }) (*Span, error) {
		var sp Span
		var in, out sql.NullString
		var ended Time
		if err := row.Scan(&sp.ID, &sp.TraceID, &sp.WorkspaceID, &sp.ParentID, &sp.Name, &sp.Kind, &sp.Status, &in, &out, &sp.Error,
			&sp.Attributes, &sp.TokenUsage.PromptTokens, &sp.TokenUsage.CompletionTokens, &sp.Cost, &sp.StartedAt, &ended, &sp.DurationMS); err != nil {
			return nil, err
		}
		sp.TokenUsage.TotalTokens = sp.TokenUsage.PromptTokens + sp.TokenUsage.CompletionTokens
		if in.Valid {
			sp.Input = json.RawMessage(in.String)
		}
		if out.Valid {
			sp.Output = json.RawMessage(out.String)
		}
		if !ended.IsZero() {
			sp.EndedAt = &ended
		}
		return &sp, nil
	})
	return t, err
}
