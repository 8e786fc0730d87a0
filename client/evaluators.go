package client

import (
	"context"
	"net/http"
)

func evaluatorPath(id string) string { return "/api/v1/evaluators/" + pathEscape(id) }

// EvaluatorList lists evaluators, newest first.
func (c *Client) EvaluatorList(ctx context.Context, o ListEvaluatorsParams) (*List[Evaluator], error) {
	return list[Evaluator](ctx, c, "/api/v1/evaluators", query(o))
}

// EvaluatorCreate creates an evaluator.
func (c *Client) EvaluatorCreate(ctx context.Context, in EvaluatorCreateRequest, opts ...RequestOption) (*Evaluator, error) {
	return send[Evaluator](ctx, c, http.MethodPost, "/api/v1/evaluators", in, opts...)
}

// EvaluatorGet gets an evaluator.
func (c *Client) EvaluatorGet(ctx context.Context, id string) (*Evaluator, error) {
	return get[Evaluator](ctx, c, evaluatorPath(id), nil)
}

// EvaluatorUpdate changes an evaluator's fields.
func (c *Client) EvaluatorUpdate(ctx context.Context, id string, in EvaluatorUpdateRequest) (*Evaluator, error) {
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
