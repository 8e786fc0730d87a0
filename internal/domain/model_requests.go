package domain

import "strings"

// LlmModelCreateRequest registers a model of the workspace's own in the model catalog. The
// document checks its shape; Validate holds the rest. (Its name is its published schema's,
// which the SDKs are generated from.)
type LlmModelCreateRequest struct {
	ID                    string   `json:"id" minLength:"1" pattern:"\\S" maxLength:"200" doc:"The model id sent to the provider, e.g. llama3.1:8b or meta-llama/Llama-3.1-8B-Instruct."`
	Provider              string   `json:"provider" minLength:"1" pattern:"\\S" maxLength:"100" doc:"Whose credential serves it by default, e.g. ollama or openai_compatible."`
	Name                  string   `json:"name,omitempty" maxLength:"200" doc:"Display name (default: the id)."`
	Description           string   `json:"description,omitempty" maxLength:"2000"`
	ContextWindow         int      `json:"context_window" minimum:"1" maximum:"100000000" doc:"Tokens the model reads at most; chat history is trimmed to fit."`
	MaxOutputTokens       int      `json:"max_output_tokens,omitempty" minimum:"0" maximum:"100000000" doc:"Tokens the model writes at most (0: unknown)."`
	InputPricePerMillion  float64  `json:"input_price_per_million,omitempty" minimum:"0" maximum:"1000000" doc:"USD per million prompt tokens (0 for a model you host)."`
	OutputPricePerMillion float64  `json:"output_price_per_million,omitempty" minimum:"0" maximum:"1000000" doc:"USD per million completion tokens."`
	Capabilities          []string `json:"capabilities,omitempty" doc:"e.g. chat, tools, json_mode, reasoning, streaming."`
}

// Validate holds a new model's rules: an id and a provider that are more than white space, an
// id without control characters, and at most 32 capabilities of 1 to 50 characters.
func (r *LlmModelCreateRequest) Validate() error {
	if err := FirstErr(NotBlank("id", r.ID), NotBlank("provider", r.Provider), checkCapabilities(r.Capabilities)); err != nil {
		return err
	}
	if strings.ContainsAny(r.ID, "\n\r\t") {
		return Invalid("id", "must not contain control characters")
	}
	return nil
}

// LlmModelUpdateRequest is a change to a workspace model; a field left out stays as it is.
type LlmModelUpdateRequest struct {
	Provider              *string   `json:"provider,omitempty" minLength:"1" pattern:"\\S" maxLength:"100"`
	Name                  *string   `json:"name,omitempty" minLength:"1" pattern:"\\S" maxLength:"200"`
	Description           *string   `json:"description,omitempty" maxLength:"2000"`
	ContextWindow         *int      `json:"context_window,omitempty" minimum:"1" maximum:"100000000"`
	MaxOutputTokens       *int      `json:"max_output_tokens,omitempty" minimum:"0" maximum:"100000000"`
	InputPricePerMillion  *float64  `json:"input_price_per_million,omitempty" minimum:"0" maximum:"1000000"`
	OutputPricePerMillion *float64  `json:"output_price_per_million,omitempty" minimum:"0" maximum:"1000000"`
	Capabilities          *[]string `json:"capabilities,omitempty"`
}

// Validate holds the rules of a model change: a provider and a name that are more than white
// space, and the capabilities' bounds.
func (r *LlmModelUpdateRequest) Validate() error {
	if err := FirstErr(NotBlankIfSet("provider", r.Provider), NotBlankIfSet("name", r.Name)); err != nil {
		return err
	}
	if r.Capabilities != nil {
		return checkCapabilities(*r.Capabilities)
	}
	return nil
}

func checkCapabilities(caps []string) error {
	if len(caps) > 32 {
		return Invalid("capabilities", "must have at most 32 entries")
	}
	for i, c := range caps {
		if strings.TrimSpace(c) == "" || len(c) > 50 {
			return Invalid("capabilities", "entry %d must be 1 to 50 characters", i)
		}
	}
	return nil
}
