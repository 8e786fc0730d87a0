package client

import (
	"context"
	"net/http"
	"net/url"
)

// IngestSpans stores a batch of spans (at most 10,000 and 5 MiB); invalid spans are refused
// one by one (see IngestResult.Errors) and the others stored.
func (c *Client) IngestSpans(ctx context.Context, spans []IngestSpan) (*IngestResult, error) {
	return send[IngestResult](ctx, c, http.MethodPost, "/api/v1/traces/ingest", map[string]any{"spans": spans})
}

// TraceSummaryGet summarises traces per agent and time bucket: window is 1h, 24h, 7d or 30d
// ("" for 24h), bucket hour or day ("" for the window's default).
func (c *Client) TraceSummaryGet(ctx context.Context, window, bucket string) (*TraceSummary, error) {
	q := url.Values{}
	setIf(q, "window", window)
	setIf(q, "bucket", bucket)
	return get[TraceSummary](ctx, c, "/api/v1/traces/summary", q)
}
