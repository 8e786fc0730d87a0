package client

import (
	"context"
	"net/http"
	"time"
)

// Credential is a named secret of the workspace; reads only ever show it masked.
type Credential struct {
	ID          string         `json:"id"`
	WorkspaceID string         `json:"workspace_id"`
	Name        string         `json:"name"`
	Type        string         `json:"type"`
	Provider    string         `json:"provider"`
	Description string         `json:"description"`
	Metadata    map[string]any `json:"metadata"`
	MaskedValue string         `json:"masked_value"`
	// Valid, LastValidatedAt and ValidationMessage are the last CredentialValidate's outcome
	// (nil before the first).
	Valid             *bool      `json:"valid"`
	LastValidatedAt   *time.Time `json:"last_validated_at"`
	ValidationMessage string     `json:"validation_message"`
	CreatedAt         time.Time  `json:"created_at"`
	UpdatedAt         time.Time  `json:"updated_at"`
}

// CredentialValidation is the outcome of CredentialValidate.
type CredentialValidation struct {
	Valid     bool      `json:"valid"`
	Status    int       `json:"status"`
	Message   string    `json:"message"`
	CheckedAt time.Time `json:"checked_at"`
}

// CredentialCreate is the body of CredentialCreate; Value is the secret.
type CredentialCreate struct {
	Name        string         `json:"name"`
	Type        string         `json:"type"`
	Provider    string         `json:"provider,omitempty"`
	Description string         `json:"description,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Value       string         `json:"value"`
}

// CredentialUpdate holds the fields to change; nil fields stay as they are. A Value rotates
// the secret.
type CredentialUpdate struct {
	Name        *string         `json:"name,omitempty"`
	Provider    *string         `json:"provider,omitempty"`
	Description *string         `json:"description,omitempty"`
	Metadata    *map[string]any `json:"metadata,omitempty"`
	Value       *string         `json:"value,omitempty"`
}

// CredentialListOptions filters CredentialList.
type CredentialListOptions struct {
	ListOptions
	Type     string
	Provider string
	Query    string
}

// CredentialList lists credentials, newest first.
func (c *Client) CredentialList(ctx context.Context, o CredentialListOptions) (*List[Credential], error) {
	q := o.values()
	setIf(q, "type", o.Type)
	setIf(q, "provider", o.Provider)
	setIf(q, "q", o.Query)
	return list[Credential](ctx, c, "/api/v1/credentials", q)
}

// CredentialCreate stores a credential and returns it masked.
func (c *Client) CredentialCreate(ctx context.Context, in CredentialCreate, opts ...RequestOption) (*Credential, error) {
	return send[Credential](ctx, c, http.MethodPost, "/api/v1/credentials", in, opts...)
}

// CredentialGet gets a credential (masked).
func (c *Client) CredentialGet(ctx context.Context, id string) (*Credential, error) {
	return get[Credential](ctx, c, "/api/v1/credentials/"+pathEscape(id), nil)
}

// CredentialUpdate changes a credential's fields or rotates its value.
func (c *Client) CredentialUpdate(ctx context.Context, id string, in CredentialUpdate) (*Credential, error) {
	return send[Credential](ctx, c, http.MethodPatch, "/api/v1/credentials/"+pathEscape(id), in)
}

// CredentialValidate checks a model-provider credential against its provider (by listing
// its models) and stores the outcome on the credential.
func (c *Client) CredentialValidate(ctx context.Context, id string) (*CredentialValidation, error) {
	return send[CredentialValidation](ctx, c, http.MethodPost, "/api/v1/credentials/"+pathEscape(id)+"/validate", nil)
}

// CredentialDelete deletes a credential no data source or MCP tool uses, returning it.
func (c *Client) CredentialDelete(ctx context.Context, id string) (*Credential, error) {
	return send[Credential](ctx, c, http.MethodDelete, "/api/v1/credentials/"+pathEscape(id), nil)
}
