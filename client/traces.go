package client

import (
	"context"
	"net/http"
)

// IngestSpans stores a batch of spans (at most 10,000 and 5 MiB); invalid spans are refused
// one by one (see IngestResult.Errors) and the others stored.
func (c *Client) IngestSpans(ctx context.Context, spans []IngestSpan) (*IngestResult, error) {
	return send[IngestResult](ctx, c, http.MethodPost, "/api/v1/traces/ingest", map[string]any{"spans": spans})
}

// TraceSummaryGet summarises traces per agent and time bucket (o.Window 1h, 24h, 7d or 30d,
// default 24h; o.Bucket hour or day, default the window's).
func (c *Client) TraceSummaryGet(ctx context.Context, o GetTraceSummaryParams) (*TraceSummary, error) {
	return get[TraceSummary](ctx, c, "/api/v1/traces/summary", query(o))
}
