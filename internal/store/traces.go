package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// Trace groups the spans of one execution (or of an ingested SDK trace).
type Trace struct {
	ID          string     `json:"id"`
	WorkspaceID string     `json:"workspace_id"`
	ExecutionID *string    `json:"execution_id"`
	AgentID     *string    `json:"agent_id"`
	SessionID   *string    `json:"session_id"`
	Name        string     `json:"name"`
	Status      string     `json:"status" enum:"pending,running,completed,failed,cancelled,awaiting_approval,rejected" doc:"The status of the trace's execution."`
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
// guardrail check, history trimming, an approval wait, a sub-agent, memories retrieved or stored.
type Span struct {
	ID          string          `json:"id"`
	TraceID     string          `json:"trace_id"`
	WorkspaceID string          `json:"workspace_id"`
	ParentID    *string         `json:"parent_id"`
	Name        string          `json:"name"`
	Kind        string          `json:"kind" enum:"agent,prompt,llm,tool,guardrail,history,approval,validation,step,subagent,memory"`
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

// SpanInsert stores finished spans of one trace as one batch.
func (s *Store) SpanInsert(ctx context.Context, spans []*Span) error {
	if len(spans) == 0 {
		return nil
	}
	for _, sp := range spans {
		if sp.ID == "" {
			sp.ID = NewID()
		}
	}
	raw, err := json.Marshal(spans)
	if err != nil {
		return fmt.Errorf("encode spans: %w", err)
	}
	_, err = s.exec(ctx, "INSERT INTO spans (trace_id, first_id, workspace_id, count, spans) VALUES ($1, $2, $3, $4, $5)",
		spans[0].TraceID, spans[0].ID, spans[0].WorkspaceID, len(spans), string(raw))
	if err != nil {
		return fmt.Errorf("insert spans: %w", err)
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
	rows, err := s.r.QueryContext(ctx, "SELECT spans FROM spans WHERE trace_id = $1 AND workspace_id = $2", id, ws)
	if err != nil {
		return nil, fmt.Errorf("list spans of %s: %w", id, err)
	}
	defer rows.Close()
	t.Spans = []*Span{}
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			return nil, err
		}
		var batch []*Span
		if err := json.Unmarshal([]byte(raw), &batch); err != nil {
			return nil, fmt.Errorf("decode spans of %s: %w", id, err)
		}
		t.Spans = append(t.Spans, batch...)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sort.SliceStable(t.Spans, func(i, j int) bool {
		if !t.Spans[i].StartedAt.Equal(t.Spans[j].StartedAt.Time) {
			return t.Spans[i].StartedAt.Before(t.Spans[j].StartedAt.Time)
		}
		return t.Spans[i].ID < t.Spans[j].ID
	})
	return t, err
}
