package client

import (
	"context"
	"net/http"
)

// PromptList lists prompts, newest first.
func (c *Client) PromptList(ctx context.Context, o ListPromptsParams) (*List[Prompt], error) {
	return list[Prompt](ctx, c, "/api/v1/prompts", query(o))
}

// PromptCreate creates a prompt and its active version 1.
func (c *Client) PromptCreate(ctx context.Context, in PromptCreateRequest, opts ...RequestOption) (*Prompt, error) {
	return send[Prompt](ctx, c, http.MethodPost, "/api/v1/prompts", in, opts...)
}

// PromptGet gets a prompt.
func (c *Client) PromptGet(ctx context.Context, id string) (*Prompt, error) {
	return get[Prompt](ctx, c, "/api/v1/prompts/"+pathEscape(id), nil)
}

// PromptUpdate changes a prompt's fields.
func (c *Client) PromptUpdate(ctx context.Context, id string, in PromptUpdateRequest) (*Prompt, error) {
	return send[Prompt](ctx, c, http.MethodPatch, "/api/v1/prompts/"+pathEscape(id), in)
}

// PromptDelete deletes a prompt and its versions, returning it; a 409 while an agent uses it.
func (c *Client) PromptDelete(ctx context.Context, id string) (*Prompt, error) {
	return send[Prompt](ctx, c, http.MethodDelete, "/api/v1/prompts/"+pathEscape(id), nil)
}

// PromptVersionList lists a prompt's versions, newest first.
func (c *Client) PromptVersionList(ctx context.Context, promptID string, o ListPromptVersionsParams) (*List[PromptVersion], error) {
	return list[PromptVersion](ctx, c, "/api/v1/prompts/"+pathEscape(promptID)+"/versions", query(o))
}

// PromptVersionCreate adds a version (not active until promoted).
func (c *Client) PromptVersionCreate(ctx context.Context, promptID string, in PromptVersionCreateRequest, opts ...RequestOption) (*PromptVersion, error) {
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
