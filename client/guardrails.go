package client

import (
	"context"
	"net/http"
	"time"
)

// GuardrailScanner is one check of a guardrail: a scanner type and its options.
type GuardrailScanner struct {
	Type   string         `json:"type"`
	Config map[string]any `json:"config"`
}

// Guardrail is a named set of scanners run on an agent's input, output or both.
type Guardrail struct {
	ID          string             `json:"id"`
	WorkspaceID string             `json:"workspace_id"`
	Name        string             `json:"name"`
	Description string             `json:"description"`
	AppliesTo   string             `json:"applies_to"`
	Action      string             `json:"action"`
	Enabled     bool               `json:"enabled"`
	Scanners    []GuardrailScanner `json:"scanners"`
	CreatedAt   time.Time          `json:"created_at"`
	UpdatedAt   time.Time          `json:"updated_at"`
}

// GuardrailCreate is the body of GuardrailCreate; AppliesTo defaults to both, Action to block
// and Enabled to true.
type GuardrailCreate struct {
	Name        string             `json:"name"`
	Description string             `json:"description,omitempty"`
	AppliesTo   string             `json:"applies_to,omitempty"`
	Action      string             `json:"action,omitempty"`
	Enabled     *bool              `json:"enabled,omitempty"`
	Scanners    []GuardrailScanner `json:"scanners"`
}

// GuardrailUpdate holds the fields to change; nil fields stay as they are.
type GuardrailUpdate struct {
	Name        *string             `json:"name,omitempty"`
	Description *string             `json:"description,omitempty"`
	AppliesTo   *string             `json:"applies_to,omitempty"`
	Action      *string             `json:"action,omitempty"`
	Enabled     *bool               `json:"enabled,omitempty"`
	Scanners    *[]GuardrailScanner `json:"scanners,omitempty"`
}

// GuardrailListOptions filters GuardrailList.
type GuardrailListOptions struct {
	ListOptions
	Enabled *bool
	Query   string
}

// GuardrailScannerOption is one config option of a scanner type.
type GuardrailScannerOption struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Description string   `json:"description"`
	Required    bool     `json:"required"`
	Default     any      `json:"default,omitempty"`
	Enum        []string `json:"enum,omitempty"`
	Minimum     *float64 `json:"minimum,omitempty"`
	Maximum     *float64 `json:"maximum,omitempty"`
	MaxItems    int      `json:"max_items,omitempty"`
}

// GuardrailScannerType is an entry of the scanner catalog.
type GuardrailScannerType struct {
	Type        string                   `json:"type"`
	Name        string                   `json:"name"`
	Description string                   `json:"description"`
	Redacts     bool                     `json:"redacts"`
	Options     []GuardrailScannerOption `json:"options"`
}

// GuardrailTestRequest is the body of GuardrailTest; Stage is input or output.
type GuardrailTestRequest struct {
	Text  string `json:"text"`
	Stage string `json:"stage,omitempty"`
}

// GuardrailFinding is one thing a scanner found; offsets are in Unicode code points.
type GuardrailFinding struct {
	Type   string `json:"type"`
	Start  int    `json:"start"`
	End    int    `json:"end"`
	Match  string `json:"match"`
	Detail string `json:"detail,omitempty"`
}

// GuardrailResult is what one scanner found.
type GuardrailResult struct {
	Scanner  string             `json:"scanner"`
	Passed   bool               `json:"passed"`
	Score    float64            `json:"score"`
	Action   string             `json:"action,omitempty"`
	Findings []GuardrailFinding `json:"findings"`
	Redacted string             `json:"redacted,omitempty"`
}

// GuardrailOutcome is a guardrail's verdict on a text: Action is allow, warn, redact or
// block, and Output the text to pass on.
type GuardrailOutcome struct {
	GuardrailID string            `json:"guardrail_id"`
	Name        string            `json:"name"`
	Stage       string            `json:"stage"`
	Skipped     bool              `json:"skipped"`
	Passed      bool              `json:"passed"`
	Action      string            `json:"action"`
	Output      string            `json:"output"`
	Results     []GuardrailResult `json:"results"`
}

// GuardrailList lists guardrails, newest first.
func (c *Client) GuardrailList(ctx context.Context, o GuardrailListOptions) (*List[Guardrail], error) {
	q := o.values()
	setBool(q, "enabled", o.Enabled)
	setIf(q, "q", o.Query)
	return list[Guardrail](ctx, c, "/api/v1/guardrails", q)
}

// GuardrailCreate creates a guardrail.
func (c *Client) GuardrailCreate(ctx context.Context, in GuardrailCreate, opts ...RequestOption) (*Guardrail, error) {
	return send[Guardrail](ctx, c, http.MethodPost, "/api/v1/guardrails", in, opts...)
}

// GuardrailGet gets a guardrail.
func (c *Client) GuardrailGet(ctx context.Context, id string) (*Guardrail, error) {
	return get[Guardrail](ctx, c, "/api/v1/guardrails/"+pathEscape(id), nil)
}

// GuardrailUpdate changes a guardrail's fields.
func (c *Client) GuardrailUpdate(ctx context.Context, id string, in GuardrailUpdate) (*Guardrail, error) {
	return send[Guardrail](ctx, c, http.MethodPatch, "/api/v1/guardrails/"+pathEscape(id), in)
}

// GuardrailDelete deletes a guardrail, returning it; the server refuses (409) while an agent
// version uses it.
func (c *Client) GuardrailDelete(ctx context.Context, id string) (*Guardrail, error) {
	return send[Guardrail](ctx, c, http.MethodDelete, "/api/v1/guardrails/"+pathEscape(id), nil)
}

// GuardrailScanners lists the scanner types with their options.
func (c *Client) GuardrailScanners(ctx context.Context, o ListOptions) (*List[GuardrailScannerType], error) {
	return list[GuardrailScannerType](ctx, c, "/api/v1/guardrails/scanners", o.values())
}

// GuardrailTest checks a text against a guardrail without recording anything.
func (c *Client) GuardrailTest(ctx context.Context, id string, in GuardrailTestRequest) (*GuardrailOutcome, error) {
	return send[GuardrailOutcome](ctx, c, http.MethodPost, "/api/v1/guardrails/"+pathEscape(id)+"/test", in)
}
