package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// IngestSpan is one span sent with IngestSpans. ID, TraceID, Name and StartedAt are required;
// ids are 1 to 128 letters, digits, '-', '_', '.' or ':'
// (OpenTelemetry's hex ids, KSUIDs and UUIDs fit). A span sent again
// (same trace and id) replaces the stored one.
type IngestSpan struct {
	ID          string          `json:"id"`
	TraceID     string          `json:"trace_id"`
	ParentID    *string         `json:"parent_id,omitempty"`
	Name        string          `json:"name"`
	Kind        string          `json:"kind,omitempty"`   // default: llm when Model is set, else span
	Status      string          `json:"status,omitempty"` // ok or error (default ok; error when Error is set)
	StartedAt   time.Time       `json:"started_at"`
	EndedAt     *time.Time      `json:"ended_at,omitempty"`
	Model       *string         `json:"model,omitempty"`
	Provider    *string         `json:"provider,omitempty"`
	Input       json.RawMessage `json:"input,omitempty"`
	Output      json.RawMessage `json:"output,omitempty"`
	Error       *string         `json:"error,omitempty"`
	TokenUsage  *TokenUsage     `json:"token_usage,omitempty"`
	Cost        *float64        `json:"cost,omitempty"` // default: the model catalog's price of TokenUsage
	Attributes  map[string]any  `json:"attributes,omitempty"`
	ServiceName *string         `json:"service_name,omitempty"`
	AgentID     *string         `json:"agent_id,omitempty"`    // sets the trace's agent
	SessionID   *string         `json:"session_id,omitempty"`  // sets the trace's session
	EndUserID   *string         `json:"end_user_id,omitempty"` // sets the trace's end user
}

// IngestError names one span IngestSpans refused.
type IngestError struct {
	Index   int    `json:"index"`
	ID      string `json:"id"`
	TraceID string `json:"trace_id"`
	Message string `json:"message"`
}

// IngestResult counts the spans stored and refused.
type IngestResult struct {
	Accepted int           `json:"accepted"`
	Rejected int           `json:"rejected"`
	Errors   []IngestError `json:"errors"`
}

// IngestSpans stores a batch of spans (at most 10,000 and 5 MiB); invalid spans are refused
// one by one (see IngestResult.Errors) and the others stored.
func (c *Client) IngestSpans(ctx context.Context, spans []IngestSpan) (*IngestResult, error) {
	return send[IngestResult](ctx, c, http.MethodPost, "/api/v1/traces/ingest", map[string]any{"spans": spans})
}

// Latency holds latency percentiles in milliseconds (nil when no run of the bucket ended).
type Latency struct {
	P50 *float64 `json:"p50"`
	P95 *float64 `json:"p95"`
	P99 *float64 `json:"p99"`
}

// TraceBucket summarises one agent's traces in one time bucket.
type TraceBucket struct {
	AgentID     *string    `json:"agent_id"`
	BucketStart time.Time  `json:"bucket_start"`
	Runs        int64      `json:"runs"`
	Errors      int64      `json:"errors"`
	ErrorRate   float64    `json:"error_rate"`
	TokenUsage  TokenUsage `json:"token_usage"`
	Cost        float64    `json:"cost"`
	LatencyMS   Latency    `json:"latency_ms"`
}

// TraceSummary is the answer of TraceSummaryGet.
type TraceSummary struct {
	Window  string         `json:"window"`
	Bucket  string         `json:"bucket"`
	From    time.Time      `json:"from"`
	To      time.Time      `json:"to"`
	Buckets []*TraceBucket `json:"buckets"`
}

// TraceSummaryGet summarises traces per agent and time bucket: window is 1h, 24h, 7d or 30d
// ("" for 24h), bucket hour or day ("" for the window's default).
func (c *Client) TraceSummaryGet(ctx context.Context, window, bucket string) (*TraceSummary, error) {
	q := url.Values{}
	setIf(q, "window", window)
	setIf(q, "bucket", bucket)
	return get[TraceSummary](ctx, c, "/api/v1/traces/summary", q)
}
