package domain

// GuardrailScanner is one check of a guardrail: a scanner type of package guardrail and its
// options.
type GuardrailScanner struct {
	Type   string     `json:"type" required:"true"`
	Config JSONObject `json:"config"`
}

// Guardrail is a named set of scanners run on an agent's input, output or both; agent configs
// list its id in "guardrails".
type Guardrail struct {
	ID          string             `json:"id"`
	WorkspaceID string             `json:"workspace_id"`
	Name        string             `json:"name"`
	Description string             `json:"description"`
	AppliesTo   string             `json:"applies_to" enum:"input,output,both"`
	Action      string             `json:"action" enum:"block,warn,redact" doc:"What happens when a scanner fails, unless the scanner's config.action says otherwise."`
	Enabled     bool               `json:"enabled"`
	Scanners    []GuardrailScanner `json:"scanners"`
	CreatedAt   Time               `json:"created_at"`
	UpdatedAt   Time               `json:"updated_at"`
}

// GuardrailFilter narrows GuardrailList; zero fields match everything.
type GuardrailFilter struct {
	Enabled *bool
	Query   string // substring of name or description, case-insensitive
}

// GuardrailPatch holds the fields of a guardrail to change; nil fields stay as they are.
type GuardrailPatch struct {
	Name        *string
	Description *string
	AppliesTo   *string
	Action      *string
	Enabled     *bool
	Scanners    *[]GuardrailScanner
}
