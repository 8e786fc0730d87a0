package client

import (
	"context"
	"net/http"
)

// CredentialList lists credentials, newest first.
func (c *Client) CredentialList(ctx context.Context, o ListCredentialsParams) (*List[Credential], error) {
	return list[Credential](ctx, c, "/api/v1/credentials", query(o))
}

// CredentialCreate stores a credential and returns it masked.
func (c *Client) CredentialCreate(ctx context.Context, in CredentialCreateRequest, opts ...RequestOption) (*Credential, error) {
	return send[Credential](ctx, c, http.MethodPost, "/api/v1/credentials", in, opts...)
}

// CredentialGet gets a credential (masked).
func (c *Client) CredentialGet(ctx context.Context, id string) (*Credential, error) {
	return get[Credential](ctx, c, "/api/v1/credentials/"+pathEscape(id), nil)
}

// CredentialUpdate changes a credential's fields or rotates its value.
func (c *Client) CredentialUpdate(ctx context.Context, id string, in CredentialUpdateRequest) (*Credential, error) {
	return send[Credential](ctx, c, http.MethodPatch, "/api/v1/credentials/"+pathEscape(id), in)
}

// CredentialValidate checks a model-provider credential against its provider (by listing
// its models) and stores the outcome on the credential.
func (c *Client) CredentialValidate(ctx context.Context, id string) (*Validation, error) {
	return send[Validation](ctx, c, http.MethodPost, "/api/v1/credentials/"+pathEscape(id)+"/validate", nil)
}

// CredentialDelete deletes a credential no data source or MCP tool uses, returning it.
func (c *Client) CredentialDelete(ctx context.Context, id string) (*Credential, error) {
	return send[Credential](ctx, c, http.MethodDelete, "/api/v1/credentials/"+pathEscape(id), nil)
}
