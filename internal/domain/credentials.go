package domain

// CredentialTypes lists the kinds of credential.
var CredentialTypes = []string{"api_key", "bearer_token", "basic_auth", "database_url", "oauth2"}

// Credential is a named secret of a workspace. Its value is stored only sealed (bound to the
// workspace and id) beside a masked form for display; no read returns the value itself.
type Credential struct {
	ID          string     `json:"id"`
	WorkspaceID string     `json:"workspace_id"`
	Name        string     `json:"name"`
	Type        string     `json:"type" enum:"api_key,bearer_token,basic_auth,database_url,oauth2"`
	Provider    string     `json:"provider"`
	Description string     `json:"description"`
	Metadata    JSONObject `json:"metadata"`
	MaskedValue string     `json:"masked_value" doc:"The value as reads show it: at most a 3-character prefix and the last 4 characters (sk-…abcd); under 12 characters only … and the last 2. The value itself is never returned."`
	// Valid is the outcome of the last validation (POST /credentials/{id}/validate); null
	// until the first one.
	Valid             *bool  `json:"valid" doc:"Whether the last validation found the credential accepted; null before the first."`
	LastValidatedAt   *Time  `json:"last_validated_at" doc:"When the credential was last validated; null before the first validation."`
	ValidationMessage string `json:"validation_message" doc:"What the last validation found (the provider's message for a rejected key)."`
	CreatedAt         Time   `json:"created_at"`
	UpdatedAt         Time   `json:"updated_at"`
}

// CredentialFilter narrows CredentialList; empty fields match everything.
type CredentialFilter struct {
	Type     string
	Provider string
	Query    string // substring of name or description, case-insensitive
}

// CredentialPatch holds the fields of a credential to change; nil fields stay as they are.
// A new Value is sealed again and its masked form recomputed.
type CredentialPatch struct {
	Name        *string
	Description *string
	Provider    *string
	Metadata    *JSONObject
	Value       *string
}

// SealedSecret is a secret value as the store keeps it: sealed (see internal/vault) and masked.
type SealedSecret struct {
	Sealed string
	Masked string
}

// CredentialSecret is one credential's sealed value and mask.
type CredentialSecret struct {
	ID          string
	WorkspaceID string
	SealedSecret
}
