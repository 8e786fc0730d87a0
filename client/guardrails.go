package client

import (
	"context"
	"net/http"
)

// GuardrailList lists guardrails, newest first.
func (c *Client) GuardrailList(ctx context.Context, o ListGuardrailsParams) (*List[Guardrail], error) {
	return list[Guardrail](ctx, c, "/api/v1/guardrails", query(o))
}

// GuardrailCreate creates a guardrail.
func (c *Client) GuardrailCreate(ctx context.Context, in GuardrailCreateRequest, opts ...RequestOption) (*Guardrail, error) {
	return send[Guardrail](ctx, c, http.MethodPost, "/api/v1/guardrails", in, opts...)
}

// GuardrailGet gets a guardrail.
func (c *Client) GuardrailGet(ctx context.Context, id string) (*Guardrail, error) {
	return get[Guardrail](ctx, c, "/api/v1/guardrails/"+pathEscape(id), nil)
}

// GuardrailUpdate changes a guardrail's fields.
func (c *Client) GuardrailUpdate(ctx context.Context, id string, in GuardrailUpdateRequest) (*Guardrail, error) {
	return send[Guardrail](ctx, c, http.MethodPatch, "/api/v1/guardrails/"+pathEscape(id), in)
}

// GuardrailDelete deletes a guardrail, returning it; the server refuses (409) while an agent
// version uses it.
func (c *Client) GuardrailDelete(ctx context.Context, id string) (*Guardrail, error) {
	return send[Guardrail](ctx, c, http.MethodDelete, "/api/v1/guardrails/"+pathEscape(id), nil)
}

// GuardrailScanners lists the scanner types with their options.
func (c *Client) GuardrailScanners(ctx context.Context, o ListGuardrailScannersParams) (*List[ScannerType], error) {
	return list[ScannerType](ctx, c, "/api/v1/guardrails/scanners", query(o))
}

// GuardrailTest checks a text against a guardrail without recording anything.
func (c *Client) GuardrailTest(ctx context.Context, id string, in GuardrailTestRequest) (*Outcome, error) {
	return send[Outcome](ctx, c, http.MethodPost, "/api/v1/guardrails/"+pathEscape(id)+"/test", in)
}
