package domain

// Model sources: the built-in catalog shared by every workspace, or a workspace's own entry.
const (
	ModelSourceCatalog   = "catalog"
	ModelSourceWorkspace = "workspace"
)

// LLMModel is a model entry: of the built-in catalog, shared by every workspace and
// read-only, or registered by one workspace. Prices are USD per million tokens and drive
// the cost of each execution.
type LLMModel struct {
	ID                    string  `json:"id"`
	Source                string  `json:"source" enum:"catalog,workspace" doc:"catalog: built in, read-only; workspace: registered by this workspace."`
	Provider              string  `json:"provider"`
	Name                  string  `json:"name"`
	Description           string  `json:"description"`
	ContextWindow         int     `json:"context_window"`
	MaxOutputTokens       int     `json:"max_output_tokens"`
	InputPricePerMillion  float64 `json:"input_price_per_million"`
	OutputPricePerMillion float64 `json:"output_price_per_million"`
	Capabilities          Strings `json:"capabilities"`
	CreatedAt             Time    `json:"created_at"`
	UpdatedAt             Time    `json:"updated_at"`
}

// LLMModelFilter narrows LLMModelList.
type LLMModelFilter struct {
	Provider   string
	Capability string
	Query      string
	Source     string // ModelSourceCatalog or ModelSourceWorkspace; "" for both
}

// LLMModelPatch holds the fields of a workspace model to change; nil fields stay.
type LLMModelPatch struct {
	Provider              *string
	Name                  *string
	Description           *string
	ContextWindow         *int
	MaxOutputTokens       *int
	InputPricePerMillion  *float64
	OutputPricePerMillion *float64
	Capabilities          *Strings
}
