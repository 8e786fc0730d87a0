package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// Score data types and sources.
const (
	ScoreNumeric     = "numeric"
	ScoreCategorical = "categorical"
	ScoreBoolean     = "boolean"

	ScoreSourceAPI        = "api"
	ScoreSourceAnnotation = "annotation"
	ScoreSourceEval       = "eval"
)

// ScoreAuthor is who wrote a score: an API key (its id and prefix) or a user (id and email).
type ScoreAuthor struct {
	Type string `json:"type"` // "api_key" or "user"
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Score is a judgement (a number, a category or a boolean) of an execution, a trace, a span
// or a chat session.
type Score struct {
	ID          string         `json:"id"`
	WorkspaceID string         `json:"workspace_id"`
	Name        string         `json:"name"`
	ConfigID    *string        `json:"config_id"`
	DataType    string         `json:"data_type"`
	Value       *float64       `json:"value"`
	StringValue *string        `json:"string_value"`
	ExecutionID *string        `json:"execution_id"`
	TraceID     *string        `json:"trace_id"`
	SpanID      *string        `json:"span_id"`
	SessionID   *string        `json:"session_id"`
	Source      string         `json:"source"`
	RuleID      *string        `json:"rule_id"` // the evaluation rule that gave it (online evaluation)
	Comment     string         `json:"comment"`
	Author      *ScoreAuthor   `json:"author"` // nil in the emulator
	Metadata    map[string]any `json:"metadata"`
	CreatedAt   time.Time      `json:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at"`
}

// ScoreCreate is the body of ScoreCreate: a name and data type, or a config; a value; at
// least one target.
type ScoreCreate struct {
	Name        string         `json:"name,omitempty"`
	ConfigID    *string        `json:"config_id,omitempty"`
	DataType    string         `json:"data_type,omitempty"`
	Value       *float64       `json:"value,omitempty"`
	StringValue *string        `json:"string_value,omitempty"`
	ExecutionID *string        `json:"execution_id,omitempty"`
	TraceID     *string        `json:"trace_id,omitempty"`
	SpanID      *string        `json:"span_id,omitempty"`
	SessionID   *string        `json:"session_id,omitempty"`
	Source      string         `json:"source,omitempty"`
	Comment     string         `json:"comment,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// ScoreUpdate holds the fields of a score to change; nil fields stay as they are.
type ScoreUpdate struct {
	Value       *float64        `json:"value,omitempty"`
	StringValue *string         `json:"string_value,omitempty"`
	Comment     *string         `json:"comment,omitempty"`
	Metadata    *map[string]any `json:"metadata,omitempty"`
}

// ScoreListOptions filters ScoreList and ScoreSummary.
type ScoreListOptions struct {
	ListOptions
	Name, ConfigID, DataType, Source, RuleID string
	ExecutionID, TraceID, SpanID, SessionID  string
	CreatedAfter, CreatedBefore              time.Time
}

func (o ScoreListOptions) query() url.Values {
	q := o.values()
	setIf(q, "name", o.Name)
	setIf(q, "config_id", o.ConfigID)
	setIf(q, "data_type", o.DataType)
	setIf(q, "source", o.Source)
	setIf(q, "rule_id", o.RuleID)
	setIf(q, "execution_id", o.ExecutionID)
	setIf(q, "trace_id", o.TraceID)
	setIf(q, "span_id", o.SpanID)
	setIf(q, "session_id", o.SessionID)
	setTime(q, "created_after", o.CreatedAfter)
	setTime(q, "created_before", o.CreatedBefore)
	return q
}

// ScoreList lists scores, newest first.
func (c *Client) ScoreList(ctx context.Context, o ScoreListOptions) (*List[Score], error) {
	return list[Score](ctx, c, "/api/v1/scores", o.query())
}

// ScoreCreate gives a score.
func (c *Client) ScoreCreate(ctx context.Context, in ScoreCreate, opts ...RequestOption) (*Score, error) {
	return send[Score](ctx, c, http.MethodPost, "/api/v1/scores", in, opts...)
}

// ScoreGet gets a score.
func (c *Client) ScoreGet(ctx context.Context, id string) (*Score, error) {
	return get[Score](ctx, c, "/api/v1/scores/"+pathEscape(id), nil)
}

// ScoreUpdate changes a score's value, comment or metadata.
func (c *Client) ScoreUpdate(ctx context.Context, id string, in ScoreUpdate) (*Score, error) {
	return send[Score](ctx, c, http.MethodPatch, "/api/v1/scores/"+pathEscape(id), in)
}

// ScoreDelete deletes a score, returning it.
func (c *Client) ScoreDelete(ctx context.Context, id string) (*Score, error) {
	return send[Score](ctx, c, http.MethodDelete, "/api/v1/scores/"+pathEscape(id), nil)
}

// ScoreSummary sums up the scores the options select, per name and data type.
type ScoreSummary struct {
	Name       string            `json:"name"`
	DataType   string            `json:"data_type"`
	Count      int               `json:"count"`
	Mean       *float64          `json:"mean"`
	Min        *float64          `json:"min"`
	Max        *float64          `json:"max"`
	Buckets    []ScoreBucket     `json:"buckets"`
	Categories []ScoreLabelCount `json:"categories"`
}

// ScoreBucket counts numeric scores from Lower to Upper (Lower = Upper: one value).
type ScoreBucket struct {
	Lower float64 `json:"lower"`
	Upper float64 `json:"upper"`
	Count int     `json:"count"`
}

// ScoreLabelCount counts the categorical or boolean scores of one label.
type ScoreLabelCount struct {
	Label string `json:"label"`
	Count int    `json:"count"`
}

// ScoreSummaries lists the summaries of scores per name and data type, ordered by name.
func (c *Client) ScoreSummaries(ctx context.Context, o ScoreListOptions) (*List[ScoreSummary], error) {
	return list[ScoreSummary](ctx, c, "/api/v1/scores/summary", o.query())
}

// ScoreCategory is a label of a categorical score config and the number it stands for.
type ScoreCategory struct {
	Label string  `json:"label"`
	Value float64 `json:"value"`
}

// ScoreConfig says what the scores of a name may hold.
type ScoreConfig struct {
	ID          string          `json:"id"`
	WorkspaceID string          `json:"workspace_id"`
	Name        string          `json:"name"`
	DataType    string          `json:"data_type"`
	Min         *float64        `json:"min"`
	Max         *float64        `json:"max"`
	Categories  []ScoreCategory `json:"categories"`
	Description string          `json:"description"`
	Archived    bool            `json:"archived"`
	CreatedAt   time.Time       `json:"created_at"`
	UpdatedAt   time.Time       `json:"updated_at"`
}

// ScoreConfigCreate is the body of ScoreConfigCreate.
type ScoreConfigCreate struct {
	Name        string          `json:"name"`
	DataType    string          `json:"data_type"`
	Min         *float64        `json:"min,omitempty"`
	Max         *float64        `json:"max,omitempty"`
	Categories  []ScoreCategory `json:"categories,omitempty"`
	Description string          `json:"description,omitempty"`
	Archived    bool            `json:"archived,omitempty"`
}

// ScoreConfigUpdate holds the fields of a score config to change; nil fields stay as they
// are. ClearMin and ClearMax remove a bound.
type ScoreConfigUpdate struct {
	Name               *string
	Description        *string
	Archived           *bool
	Min, Max           *float64
	ClearMin, ClearMax bool
	Categories         *[]ScoreCategory
}

// MarshalJSON writes the fields set, and null for a bound being removed.
func (u ScoreConfigUpdate) MarshalJSON() ([]byte, error) {
	m := map[string]any{}
	if u.Name != nil {
		m["name"] = *u.Name
	}
	if u.Description != nil {
		m["description"] = *u.Description
	}
	if u.Archived != nil {
		m["archived"] = *u.Archived
	}
	if u.Categories != nil {
		m["categories"] = *u.Categories
	}
	if u.Min != nil || u.ClearMin {
		m["min"] = u.Min
	}
	if u.Max != nil || u.ClearMax {
		m["max"] = u.Max
	}
	return json.Marshal(m)
}

// ScoreConfigListOptions filters ScoreConfigList.
type ScoreConfigListOptions struct {
	ListOptions
	DataType string
	Archived *bool
	Query    string
}

// ScoreConfigList lists score configs, newest first.
func (c *Client) ScoreConfigList(ctx context.Context, o ScoreConfigListOptions) (*List[ScoreConfig], error) {
	q := o.values()
	setIf(q, "data_type", o.DataType)
	setBool(q, "archived", o.Archived)
	setIf(q, "q", o.Query)
	return list[ScoreConfig](ctx, c, "/api/v1/score-configs", q)
}

// ScoreConfigCreate creates a score config.
func (c *Client) ScoreConfigCreate(ctx context.Context, in ScoreConfigCreate, opts ...RequestOption) (*ScoreConfig, error) {
	return send[ScoreConfig](ctx, c, http.MethodPost, "/api/v1/score-configs", in, opts...)
}

// ScoreConfigGet gets a score config.
func (c *Client) ScoreConfigGet(ctx context.Context, id string) (*ScoreConfig, error) {
	return get[ScoreConfig](ctx, c, "/api/v1/score-configs/"+pathEscape(id), nil)
}

// ScoreConfigUpdate changes a score config (archive it with Archived).
func (c *Client) ScoreConfigUpdate(ctx context.Context, id string, in ScoreConfigUpdate) (*ScoreConfig, error) {
	return send[ScoreConfig](ctx, c, http.MethodPatch, "/api/v1/score-configs/"+pathEscape(id), in)
}
