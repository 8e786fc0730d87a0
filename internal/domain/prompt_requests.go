package domain

import "fmt"

// PromptCreateRequest is a new prompt and its first version. The document checks its shape
// (lengths, at most 50 tags of 1 to 100 characters); Validate holds the rest.
type PromptCreateRequest struct {
	Name        string         `json:"name" minLength:"1" pattern:"\\S" maxLength:"200" doc:"Display name."`
	Description string         `json:"description,omitempty" maxLength:"2000"`
	Tags        []string       `json:"tags,omitempty" maxItems:"50"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Template    string         `json:"template" minLength:"1" pattern:"\\S" maxLength:"100000" doc:"Mustache template of version 1, which becomes active."`
	Config      map[string]any `json:"config,omitempty" doc:"Model settings of version 1, e.g. {\"model\": \"gpt-4o\", \"temperature\": 0.3}. model must be in the catalog, temperature 0 to 2, max_tokens 1 to 1000000; the other keys allowed are top_p, stop, presence_penalty, frequency_penalty and seed (an unknown key is a 422 naming it)."`
	Notes       string         `json:"notes,omitempty" maxLength:"2000" doc:"Notes of version 1."`
}

// Validate holds a new prompt's rules: a name and tags that are more than white space, and a
// template that parses.
func (r *PromptCreateRequest) Validate() error {
	return FirstErr(NotBlank("name", r.Name), checkTags(r.Tags), checkTemplate(r.Template))
}

// PromptUpdateRequest is a change to a prompt; a field left out stays as it is.
type PromptUpdateRequest struct {
	Name        *string         `json:"name,omitempty" minLength:"1" pattern:"\\S" maxLength:"200"`
	Description *string         `json:"description,omitempty" maxLength:"2000"`
	Tags        *[]string       `json:"tags,omitempty" maxItems:"50"`
	Metadata    *map[string]any `json:"metadata,omitempty"`
}

// Validate holds the rules of a prompt change: a name and tags that are more than white space.
func (r *PromptUpdateRequest) Validate() error {
	if err := NotBlankIfSet("name", r.Name); err != nil {
		return err
	}
	if r.Tags != nil {
		return checkTags(*r.Tags)
	}
	return nil
}

// PromptVersionCreateRequest is a new version of a prompt.
type PromptVersionCreateRequest struct {
	Template string         `json:"template" minLength:"1" pattern:"\\S" maxLength:"100000" doc:"Mustache template of the new version."`
	Config   map[string]any `json:"config,omitempty" doc:"Model settings, e.g. {\"model\": \"gpt-4o\", \"temperature\": 0.3}: model, temperature, max_tokens, top_p, stop, presence_penalty, frequency_penalty, seed."`
	Notes    string         `json:"notes,omitempty" maxLength:"2000"`
}

// Validate holds a prompt version's rule: a template that is more than white space and parses.
func (r *PromptVersionCreateRequest) Validate() error {
	return checkTemplate(r.Template)
}

// checkTemplate is the 422 for a template that is blank or does not parse.
func checkTemplate(text string) error {
	if err := NotBlank("template", text); err != nil {
		return err
	}
	if err := CheckTemplate(text); err != nil {
		return Invalid("template", "%s", err.Error())
	}
	return nil
}

// checkTags rejects a blank tag, naming it; tags are stored trimmed.
func checkTags(tags []string) error {
	for i, t := range tags {
		if err := NotBlank(fmt.Sprintf("tags[%d]", i), t); err != nil {
			return err
		}
	}
	return nil
}
