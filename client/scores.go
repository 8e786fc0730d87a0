package client

import (
	"context"
	"net/http"
)

// Score data types and sources.
const (
	ScoreNumeric     = "numeric"
	ScoreCategorical = "categorical"
	ScoreBoolean     = "boolean"
)

// ScoreList lists scores, newest first.
func (c *Client) ScoreList(ctx context.Context, o ListScoresParams) (*List[Score], error) {
	return list[Score](ctx, c, "/api/v1/scores", query(o))
}

// ScoreCreate gives a score.
func (c *Client) ScoreCreate(ctx context.Context, in ScoreCreateRequest, opts ...RequestOption) (*Score, error) {
	return send[Score](ctx, c, http.MethodPost, "/api/v1/scores", in, opts...)
}

// ScoreGet gets a score.
func (c *Client) ScoreGet(ctx context.Context, id string) (*Score, error) {
	return get[Score](ctx, c, "/api/v1/scores/"+pathEscape(id), nil)
}

// ScoreUpdate changes a score's value, comment or metadata.
func (c *Client) ScoreUpdate(ctx context.Context, id string, in ScoreUpdateRequest) (*Score, error) {
	return send[Score](ctx, c, http.MethodPatch, "/api/v1/scores/"+pathEscape(id), in)
}

// ScoreDelete deletes a score, returning it.
func (c *Client) ScoreDelete(ctx context.Context, id string) (*Score, error) {
	return send[Score](ctx, c, http.MethodDelete, "/api/v1/scores/"+pathEscape(id), nil)
}

// ScoreSummaries lists the summaries of scores per name and data type, ordered by name.
func (c *Client) ScoreSummaries(ctx context.Context, o SummarizeScoresParams) (*List[ScoreSummary], error) {
	return list[ScoreSummary](ctx, c, "/api/v1/scores/summary", query(o))
}

// ScoreConfigList lists score configs, newest first.
func (c *Client) ScoreConfigList(ctx context.Context, o ListScoreConfigsParams) (*List[ScoreConfig], error) {
	return list[ScoreConfig](ctx, c, "/api/v1/score-configs", query(o))
}

// ScoreConfigCreate creates a score config.
func (c *Client) ScoreConfigCreate(ctx context.Context, in ScoreConfigCreateRequest, opts ...RequestOption) (*ScoreConfig, error) {
	return send[ScoreConfig](ctx, c, http.MethodPost, "/api/v1/score-configs", in, opts...)
}

// ScoreConfigGet gets a score config.
func (c *Client) ScoreConfigGet(ctx context.Context, id string) (*ScoreConfig, error) {
	return get[ScoreConfig](ctx, c, "/api/v1/score-configs/"+pathEscape(id), nil)
}

// ScoreConfigUpdate changes a score config (archive it with Archived).
func (c *Client) ScoreConfigUpdate(ctx context.Context, id string, in ScoreConfigUpdateRequest) (*ScoreConfig, error) {
	return send[ScoreConfig](ctx, c, http.MethodPatch, "/api/v1/score-configs/"+pathEscape(id), in)
}
