package client

import (
	"context"
	"net/http"
	"time"
)

// EvaluationRule scores finished executions with an evaluator as they end (online
// evaluation): those of AgentID (nil: every agent) that pass Filter, a Sampling share of them.
type EvaluationRule struct {
	ID          string     `json:"id"`
	WorkspaceID string     `json:"workspace_id"`
	EvaluatorID string     `json:"evaluator_id"`
	AgentID     *string    `json:"agent_id"`
	Sampling    float64    `json:"sampling"`
	Filter      RuleFilter `json:"filter"`
	Enabled     bool       `json:"enabled"`
	Judgments   Judgments  `json:"judgments"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
}

// RuleFilter says which finished executions a rule scores: final Status among these, Source
// among these (empty: any), and Metadata values equal to these.
type RuleFilter struct {
	Status   []string       `json:"status,omitempty"`
	Source   []string       `json:"source,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Judgments counts a rule's judgments by state.
type Judgments struct {
	Pending   int `json:"pending"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
}

// EvaluationRuleCreate is the body of EvaluationRuleCreate; Sampling defaults to 1 and
// Enabled to true.
type EvaluationRuleCreate struct {
	EvaluatorID string      `json:"evaluator_id"`
	AgentID     *string     `json:"agent_id,omitempty"`
	Sampling    *float64    `json:"sampling,omitempty"`
	Filter      *RuleFilter `json:"filter,omitempty"`
	Enabled     *bool       `json:"enabled,omitempty"`
}

// EvaluationRuleUpdate holds the fields of a rule to change; nil fields stay as they are.
type EvaluationRuleUpdate struct {
	EvaluatorID *string     `json:"evaluator_id,omitempty"`
	AgentID     *string     `json:"agent_id,omitempty"`
	Sampling    *float64    `json:"sampling,omitempty"`
	Filter      *RuleFilter `json:"filter,omitempty"`
	Enabled     *bool       `json:"enabled,omitempty"`
}

// EvaluationRuleListOptions filters EvaluationRuleList.
type EvaluationRuleListOptions struct {
	ListOptions
	EvaluatorID, AgentID string
}

func evaluationRulePath(id string) string { return "/api/v1/evaluation-rules/" + pathEscape(id) }

// EvaluationRuleList lists evaluation rules, newest first.
func (c *Client) EvaluationRuleList(ctx context.Context, o EvaluationRuleListOptions) (*List[EvaluationRule], error) {
	q := o.values()
	setIf(q, "evaluator_id", o.EvaluatorID)
	setIf(q, "agent_id", o.AgentID)
	return list[EvaluationRule](ctx, c, "/api/v1/evaluation-rules", q)
}

// EvaluationRuleCreate creates an evaluation rule.
func (c *Client) EvaluationRuleCreate(ctx context.Context, in EvaluationRuleCreate, opts ...RequestOption) (*EvaluationRule, error) {
	return send[EvaluationRule](ctx, c, http.MethodPost, "/api/v1/evaluation-rules", in, opts...)
}

// EvaluationRuleGet gets an evaluation rule with its judgment counts.
func (c *Client) EvaluationRuleGet(ctx context.Context, id string) (*EvaluationRule, error) {
	return get[EvaluationRule](ctx, c, evaluationRulePath(id), nil)
}

// EvaluationRuleUpdate changes a rule's fields.
func (c *Client) EvaluationRuleUpdate(ctx context.Context, id string, in EvaluationRuleUpdate) (*EvaluationRule, error) {
	return send[EvaluationRule](ctx, c, http.MethodPatch, evaluationRulePath(id), in)
}

// EvaluationRuleDelete deletes a rule, returning it; its scores stay.
func (c *Client) EvaluationRuleDelete(ctx context.Context, id string) (*EvaluationRule, error) {
	return send[EvaluationRule](ctx, c, http.MethodDelete, evaluationRulePath(id), nil)
}

// Judgment is one execution a rule scores: Status pending, completed (ScoreID set) or
// failed (LastError says why).
type Judgment struct {
	ID          string    `json:"id"`
	WorkspaceID string    `json:"workspace_id"`
	RuleID      string    `json:"rule_id"`
	ExecutionID string    `json:"execution_id"`
	Status      string    `json:"status"`
	Attempts    int       `json:"attempts"`
	ScoreID     *string   `json:"score_id"`
	LastError   *string   `json:"last_error"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// JudgmentList lists a rule's judgments, newest first; status "" is any.
func (c *Client) JudgmentList(ctx context.Context, ruleID, status string, o ListOptions) (*List[Judgment], error) {
	q := o.values()
	setIf(q, "status", status)
	return list[Judgment](ctx, c, evaluationRulePath(ruleID)+"/judgments", q)
}
