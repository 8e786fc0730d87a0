package client

import (
	"context"
	"net/http"
	"time"
)

// Prompt is a versioned prompt template; Template and Variables are its active version's.
type Prompt struct {
	ID              string         `json:"id"`
	WorkspaceID     string         `json:"workspace_id"`
	Name            string         `json:"name"`
	Description     string         `json:"description"`
	Tags            []string       `json:"tags"`
	Metadata        map[string]any `json:"metadata"`
	ActiveVersionID *string        `json:"active_version_id"`
	ActiveVersion   *int           `json:"active_version"`
	VersionCount    int            `json:"version_count"`
	Template        string         `json:"template"`
	Variables       []string       `json:"variables"`
	CreatedAt       time.Time      `json:"created_at"`
	UpdatedAt       time.Time      `json:"updated_at"`
}

// PromptVersion is one immutable template of a prompt, with optional model settings.
type PromptVersion struct {
	ID          string         `json:"id"`
	WorkspaceID string         `json:"workspace_id"`
	PromptID    string         `json:"prompt_id"`
	Version     int            `json:"version"`
	Template    string         `json:"template"`
	Variables   []string       `json:"variables"`
	Config      map[string]any `json:"config"`
	Notes       string         `json:"notes"`
	IsActive    bool           `json:"is_active"`
	CreatedAt   time.Time      `json:"created_at"`
}

// PromptCreate is the body of PromptCreate; Template, Config and Notes make version 1.
type PromptCreate struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Tags        []string       `json:"tags,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Template    string         `json:"template"`
	Config      map[string]any `json:"config,omitempty"`
	Notes       string         `json:"notes,omitempty"`
}

// PromptUpdate holds the fields to change; nil fields stay as they are.
type PromptUpdate struct {
	Name        *string         `json:"name,omitempty"`
	Description *string         `json:"description,omitempty"`
	Tags        *[]string       `json:"tags,omitempty"`
	Metadata    *map[string]any `json:"metadata,omitempty"`
}

// PromptVersionCreate is the body of PromptVersionCreate.
type PromptVersionCreate struct {
	Template string         `json:"template"`
	Config   map[string]any `json:"config,omitempty"`
	Notes    string         `json:"notes,omitempty"`
}

// PromptListOptions filters PromptList.
type PromptListOptions struct {
	ListOptions
	Query string
	Tag   string
}

// PromptPreviewRequest asks for a version rendered with variables.
type PromptPreviewRequest struct {
	Variables map[string]any `json:"variables"`
	VersionID string         `json:"version_id,omitempty"`
	Strict    bool           `json:"strict,omitempty"`
}

// PromptPreview is a rendered prompt version with the variables it uses and those missing.
type PromptPreview struct {
	PromptID  string   `json:"prompt_id"`
	VersionID string   `json:"version_id"`
	Version   int      `json:"version"`
	Rendered  string   `json:"rendered"`
	Variables []string `json:"variables"`
	Missing   []string `json:"missing"`
}

// PromptList lists prompts, newest first.
func (c *Client) PromptList(ctx context.Context, o PromptListOptions) (*List[Prompt], error) {
	q := o.values()
	setIf(q, "q", o.Query)
	setIf(q, "tag", o.Tag)
	return list[Prompt](ctx, c, "/api/v1/prompts", q)
}

// PromptCreate creates a prompt and its active version 1.
func (c *Client) PromptCreate(ctx context.Context, in PromptCreate, opts ...RequestOption) (*Prompt, error) {
	return send[Prompt](ctx, c, http.MethodPost, "/api/v1/prompts", in, opts...)
}

// PromptGet gets a prompt.
func (c *Client) PromptGet(ctx context.Context, id string) (*Prompt, error) {
	return get[Prompt](ctx, c, "/api/v1/prompts/"+pathEscape(id), nil)
}

// PromptUpdate changes a prompt's fields.
func (c *Client) PromptUpdate(ctx context.Context, id string, in PromptUpdate) (*Prompt, error) {
	return send[Prompt](ctx, c, http.MethodPatch, "/api/v1/prompts/"+pathEscape(id), in)
}

// PromptDelete deletes a prompt and its versions, returning it; a 409 while an agent uses it.
func (c *Client) PromptDelete(ctx context.Context, id string) (*Prompt, error) {
	return send[Prompt](ctx, c, http.MethodDelete, "/api/v1/prompts/"+pathEscape(id), nil)
}

// PromptVersionList lists a prompt's versions, newest first.
func (c *Client) PromptVersionList(ctx context.Context, promptID string, o ListOptions) (*List[PromptVersion], error) {
	return list[PromptVersion](ctx, c, "/api/v1/prompts/"+pathEscape(promptID)+"/versions", o.values())
}

// PromptVersionCreate adds a version (not active until promoted).
func (c *Client) PromptVersionCreate(ctx context.Context, promptID string, in PromptVersionCreate, opts ...RequestOption) (*PromptVersion, error) {
	return send[PromptVersion](ctx, c, http.MethodPost, "/api/v1/prompts/"+pathEscape(promptID)+"/versions", in, opts...)
}

// PromptVersionGet gets one version.
func (c *Client) PromptVersionGet(ctx context.Context, promptID, versionID string) (*PromptVersion, error) {
	return get[PromptVersion](ctx, c, "/api/v1/prompts/"+pathEscape(promptID)+"/versions/"+pathEscape(versionID), nil)
}

// PromptVersionPromote makes a version active and returns the prompt.
func (c *Client) PromptVersionPromote(ctx context.Context, promptID, versionID string) (*Prompt, error) {
	return send[Prompt](ctx, c, http.MethodPost, "/api/v1/prompts/"+pathEscape(promptID)+"/versions/"+pathEscape(versionID)+"/promote", nil)
}

// PromptPreview renders the active version (or in.VersionID) with in.Variables.
func (c *Client) PromptPreview(ctx context.Context, promptID string, in PromptPreviewRequest) (*PromptPreview, error) {
	return send[PromptPreview](ctx, c, http.MethodPost, "/api/v1/prompts/"+pathEscape(promptID)+"/preview", in)
}
