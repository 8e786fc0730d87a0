package domain

// APIKey is a key that authenticates requests to one workspace. Only the SHA-256 of the raw
// key is stored, and it is never part of this type: the raw key is shown once, by the API.
type APIKey struct {
	ID             string  `json:"id"`
	WorkspaceID    string  `json:"workspace_id"`
	Name           string  `json:"name"`
	KeyPrefix      string  `json:"key_prefix" doc:"The first characters of the key, for telling keys apart."`
	Scopes         Strings `json:"scopes"`
	AllowedIPs     Strings `json:"allowed_ips" doc:"Addresses and CIDR ranges the key may be used from; empty allows any."`
	AllowedOrigins Strings `json:"allowed_origins" doc:"Origin header values the key may be used with; empty allows any."`
	ExpiresAt      *Time   `json:"expires_at" doc:"When the key stops working; null for never."`
	LastUsedAt     *Time   `json:"last_used_at" doc:"Last use, written at most once a minute."`
	CreatedAt      Time    `json:"created_at"`
}
