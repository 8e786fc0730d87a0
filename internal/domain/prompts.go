package domain

import "github.com/agentplane/agentplane/internal/prompttmpl"

// TemplateVariables lists the variables of a template; a stored template always parses, but a
// read never fails because of one that does not.
func TemplateVariables(text string) []string {
	t, err := prompttmpl.Parse(text)
	if err != nil {
		return []string{}
	}
	if vars := t.Variables(); vars != nil {
		return vars
	}
	return []string{}
}

// CheckTemplate reports why text is not a prompt template (Mustache without partials), or nil.
func CheckTemplate(text string) error {
	_, err := prompttmpl.Parse(text)
	return err
}

// Prompt is a named, versioned prompt template; Template and Variables are those of its
// active version ("" and [] while it has none).
type Prompt struct {
	ID              string     `json:"id"`
	WorkspaceID     string     `json:"workspace_id"`
	Name            string     `json:"name"`
	Description     string     `json:"description"`
	Tags            Strings    `json:"tags"`
	Metadata        JSONObject `json:"metadata"`
	ActiveVersionID *string    `json:"active_version_id"`
	ActiveVersion   *int       `json:"active_version"`
	VersionCount    int        `json:"version_count"`
	Template        string     `json:"template" doc:"Template of the active version; empty while there is none."`
	Variables       []string   `json:"variables" doc:"Top-level variables the active template uses, in order of first use."`
	CreatedAt       Time       `json:"created_at"`
	UpdatedAt       Time       `json:"updated_at"`
}

// PromptVersion is one immutable template of a prompt, with optional model settings.
type PromptVersion struct {
	ID          string     `json:"id"`
	WorkspaceID string     `json:"workspace_id"`
	PromptID    string     `json:"prompt_id"`
	Version     int        `json:"version"`
	Template    string     `json:"template"`
	Variables   []string   `json:"variables" doc:"Top-level variables the template uses, in order of first use."`
	Config      JSONObject `json:"config" doc:"Optional model settings, e.g. {\"model\": \"gpt-4o\", \"temperature\": 0.3}."`
	Notes       string     `json:"notes"`
	IsActive    bool       `json:"is_active"`
	CreatedAt   Time       `json:"created_at"`
}

// PromptFilter narrows PromptList; empty fields match everything.
type PromptFilter struct {
	Query string // substring of name or description, case-insensitive
	Tag   string // one of the prompt's tags, case-insensitive
}

// PromptPatch holds the fields of a prompt to change; nil fields stay as they are.
type PromptPatch struct {
	Name        *string
	Description *string
	Tags        *Strings
	Metadata    *JSONObject
}

// PromptConfigKeys are the model settings a prompt version's config may hold; any other key
// is refused, so that a typo does not vanish.
var PromptConfigKeys = []string{"model", "temperature", "max_tokens", "top_p", "stop", "presence_penalty", "frequency_penalty", "seed"}
