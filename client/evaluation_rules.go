package client

import (
	"context"
	"net/http"
)

func evaluationRulePath(id string) string { return "/api/v1/evaluation-rules/" + pathEscape(id) }

// EvaluationRuleList lists evaluation rules, newest first.
func (c *Client) EvaluationRuleList(ctx context.Context, o ListEvaluationRulesParams) (*List[EvaluationRule], error) {
	return list[EvaluationRule](ctx, c, "/api/v1/evaluation-rules", query(o))
}

// EvaluationRuleCreate creates an evaluation rule (online evaluation): Sampling defaults to 1
// and Enabled to true.
func (c *Client) EvaluationRuleCreate(ctx context.Context, in EvaluationRuleCreateRequest, opts ...RequestOption) (*EvaluationRule, error) {
	return send[EvaluationRule](ctx, c, http.MethodPost, "/api/v1/evaluation-rules", in, opts...)
}

// EvaluationRuleGet gets an evaluation rule with its judgment counts.
func (c *Client) EvaluationRuleGet(ctx context.Context, id string) (*EvaluationRule, error) {
	return get[EvaluationRule](ctx, c, evaluationRulePath(id), nil)
}

// EvaluationRuleUpdate changes a rule's fields.
func (c *Client) EvaluationRuleUpdate(ctx context.Context, id string, in EvaluationRuleUpdateRequest) (*EvaluationRule, error) {
	return send[EvaluationRule](ctx, c, http.MethodPatch, evaluationRulePath(id), in)
}

// EvaluationRuleDelete deletes a rule, returning it; its scores stay.
func (c *Client) EvaluationRuleDelete(ctx context.Context, id string) (*EvaluationRule, error) {
	return send[EvaluationRule](ctx, c, http.MethodDelete, evaluationRulePath(id), nil)
}

// JudgmentList lists a rule's judgments, newest first.
func (c *Client) JudgmentList(ctx context.Context, ruleID string, o ListEvaluationJudgmentsParams) (*List[Judgment], error) {
	return list[Judgment](ctx, c, evaluationRulePath(ruleID)+"/judgments", query(o))
}
