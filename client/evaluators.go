package client

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// Evaluator turns a run's output into a score: Type is exact_match, contains, regex,
// json_schema, json_match, similarity or llm_judge, with its options in Config.
type Evaluator struct {
	ID            string         `json:"id"`
	WorkspaceID   string         `json:"workspace_id"`
	Name          string         `json:"name"`
	Description   string         `json:"description"`
	Type          string         `json:"type"`
	Config        map[string]any `json:"config"`
	ScoreName     string         `json:"score_name"`
	ScoreConfigID *string        `json:"score_config_id"`
	DataType      string         `json:"data_type"`
	CreatedAt     time.Time      `json:"created_at"`
	UpdatedAt     time.Time      `json:"updated_at"`
}

// EvaluatorCreate is the body of EvaluatorCreate.
type EvaluatorCreate struct {
	Name          string         `json:"name"`
	Description   string         `json:"description,omitempty"`
	Type          string         `json:"type"`
	Config        map[string]any `json:"config,omitempty"`
	ScoreName     string         `json:"score_name,omitempty"`
	ScoreConfigID *string        `json:"score_config_id,omitempty"`
}

// EvaluatorUpdate holds the fields of an evaluator to change; nil fields stay as they are.
type EvaluatorUpdate struct {
	Name          *string         `json:"name,omitempty"`
	Description   *string         `json:"description,omitempty"`
	Type          *string         `json:"type,omitempty"`
	Config        *map[string]any `json:"config,omitempty"`
	ScoreName     *string         `json:"score_name,omitempty"`
	ScoreConfigID *string         `json:"score_config_id,omitempty"`
}

// EvaluatorListOptions filters EvaluatorList.
type EvaluatorListOptions struct {
	ListOptions
	Type  string
	Name  string // exact name
	Query string
}

// EvaluatorTestRequest is a case to judge: Output is required.
type EvaluatorTestRequest struct {
	Input          map[string]any  `json:"input,omitempty"`
	Output         json.RawMessage `json:"output"`
	ExpectedOutput json.RawMessage `json:"expected_output,omitempty"`
	Metadata       map[string]any  `json:"metadata,omitempty"`
}

// EvaluationResult is the score an evaluator gives a case, checked but not stored.
type EvaluationResult struct {
	EvaluatorID string     `json:"evaluator_id"`
	Name        string     `json:"name"`
	ConfigID    *string    `json:"config_id"`
	DataType    string     `json:"data_type"`
	Value       *float64   `json:"value"`
	StringValue *string    `json:"string_value"`
	Comment     string     `json:"comment"`
	TokenUsage  TokenUsage `json:"token_usage"`
	Cost        float64    `json:"cost"`
	TraceID     *string    `json:"trace_id"` // the judge's trace; nil for deterministic types
}

func evaluatorPath(id string) string { return "/api/v1/evaluators/" + pathEscape(id) }

// EvaluatorList lists evaluators, newest first.
func (c *Client) EvaluatorList(ctx context.Context, o EvaluatorListOptions) (*List[Evaluator], error) {
	q := o.values()
	setIf(q, "type", o.Type)
	setIf(q, "name", o.Name)
	setIf(q, "q", o.Query)
	return list[Evaluator](ctx, c, "/api/v1/evaluators", q)
}

// EvaluatorCreate creates an evaluator.
func (c *Client) EvaluatorCreate(ctx context.Context, in EvaluatorCreate, opts ...RequestOption) (*Evaluator, error) {
	return send[Evaluator](ctx, c, http.MethodPost, "/api/v1/evaluators", in, opts...)
}

// EvaluatorGet gets an evaluator.
func (c *Client) EvaluatorGet(ctx context.Context, id string) (*Evaluator, error) {
	return get[Evaluator](ctx, c, evaluatorPath(id), nil)
}

// EvaluatorUpdate changes an evaluator's fields.
func (c *Client) EvaluatorUpdate(ctx context.Context, id string, in EvaluatorUpdate) (*Evaluator, error) {
	return send[Evaluator](ctx, c, http.MethodPatch, evaluatorPath(id), in)
}

// EvaluatorDelete deletes an evaluator, returning it; its scores stay.
func (c *Client) EvaluatorDelete(ctx context.Context, id string) (*Evaluator, error) {
	return send[Evaluator](ctx, c, http.MethodDelete, evaluatorPath(id), nil)
}

// EvaluatorTest scores a case with an evaluator without storing anything.
func (c *Client) EvaluatorTest(ctx context.Context, id string, in EvaluatorTestRequest) (*EvaluationResult, error) {
	return send[EvaluationResult](ctx, c, http.MethodPost, evaluatorPath(id)+"/test", in)
}
