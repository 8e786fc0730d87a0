package api

import (
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/domain"
)

// apiKeyCreateRequest is domain.APIKeyCreateRequest under the name the document has always
// published (ApiKeyCreateRequest), with the scopes' schema (TransformSchema).
type apiKeyCreateRequest domain.APIKeyCreateRequest

// APIKeyWithSecret is a key as created or rotated: the key object and, once, the raw key.
type APIKeyWithSecret struct {
	ID             string       `json:"id"`
	WorkspaceID    string       `json:"workspace_id"`
	Name           string       `json:"name"`
	KeyPrefix      string       `json:"key_prefix"`
	Scopes         []string     `json:"scopes"`
	AllowedIPs     []string     `json:"allowed_ips"`
	AllowedOrigins []string     `json:"allowed_origins"`
	ExpiresAt      *domain.Time `json:"expires_at"`
	LastUsedAt     *domain.Time `json:"last_used_at"`
	CreatedAt      domain.Time  `json:"created_at"`
	Key            string       `json:"key" doc:"The raw key. It is shown only in this response; only its hash is stored."`
}

func withSecret(k *domain.APIKey, raw string) APIKeyWithSecret {
	return APIKeyWithSecret{ID: k.ID, WorkspaceID: k.WorkspaceID, Name: k.Name, KeyPrefix: k.KeyPrefix, Scopes: k.Scopes,
		AllowedIPs: k.AllowedIPs, AllowedOrigins: k.AllowedOrigins, ExpiresAt: k.ExpiresAt, LastUsedAt: k.LastUsedAt,
		CreatedAt: k.CreatedAt, Key: raw}
}

// keys:admin is a scope keys may hold though no route requires it (managing keys needs "*"):
// keys created with it stay valid.
func init() { auth.RegisterScopes("keys:admin") }

func (s *Server) apiKeyRoutes() []route {
	const tag, scope = "API keys", auth.ScopeAll
	// Not idempotent (creates: false) on purpose: a replayed response would have to keep the
	// raw key, and the raw key is never stored.
	return []route{
		{method: "GET", path: v1 + "/api-keys", op: "listAPIKeys", tag: tag, scope: scope, summary: "List the workspace's API keys",
			list: true, resp: domain.APIKey{}, nocache: true, h: s.listAPIKeys},
		{method: "POST", path: v1 + "/api-keys", op: "createAPIKey", tag: tag, scope: scope, summary: "Create an API key",
			body: apiKeyCreateRequest{}, resp: APIKeyWithSecret{},
			status: http.StatusCreated, h: s.createAPIKey},
		{method: "GET", path: v1 + "/api-keys/{id}", op: "getAPIKey", tag: tag, scope: scope, summary: "Get an API key", resp: domain.APIKey{},
			nocache: true, h: byID(s, s.store.APIKeyGet)},
		{method: "DELETE", path: v1 + "/api-keys/{id}", op: "revokeAPIKey", tag: tag, scope: scope, summary: "Revoke an API key",
			resp: domain.APIKey{}, h: s.revokeAPIKey},
		{method: "POST", path: v1 + "/api-keys/{id}/rotate", op: "rotateAPIKey", tag: tag, scope: scope, summary: "Replace an API key's secret",
			resp: APIKeyWithSecret{}, h: s.rotateAPIKey},
	}
}

func (s *Server) listAPIKeys(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	items, total, err := s.store.APIKeyList(r.Context(), s.workspace(r), p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}

// TransformSchema documents scopes as what auth.ValidateScopes accepts: at least one, each a
// known scope. The document's schema is what the request is checked against.
func (apiKeyCreateRequest) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	p := s.Properties["scopes"]
	p.MinItems = ptr(1)
	p.Items.Enum = nil
	for _, sc := range auth.Scopes() {
		p.Items.Enum = append(p.Items.Enum, sc)
	}
	return s
}

func (s *Server) createAPIKey(w http.ResponseWriter, r *http.Request) error {
	var body apiKeyCreateRequest
	if err := decode(w, r, &body); err != nil {
		return err
	}
	req := (*domain.APIKeyCreateRequest)(&body)
	if err := req.Validate(); err != nil {
		return err
	}
	raw, err := auth.NewKey()
	if err != nil {
		return err
	}
	k := req.APIKey(s.workspace(r))
	k.KeyPrefix = auth.KeyPrefix(raw)
	k, err = s.store.APIKeyCreate(r.Context(), k, auth.HashKey(raw))
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, withSecret(k, raw))
	return nil
}

func (s *Server) revokeAPIKey(w http.ResponseWriter, r *http.Request) error {
	k, err := s.store.APIKeyRevoke(r.Context(), s.workspace(r), pathID(r, "id"))
	if err != nil {
		return err
	}
	s.keys.invalidate(k.ID)
	writeData(w, http.StatusOK, k)
	return nil
}

func (s *Server) rotateAPIKey(w http.ResponseWriter, r *http.Request) error {
	raw, err := auth.NewKey()
	if err != nil {
		return err
	}
	id := pathID(r, "id")
	k, err := s.store.APIKeyRotate(r.Context(), s.workspace(r), id, auth.KeyPrefix(raw), auth.HashKey(raw))
	if err != nil {
		return err
	}
	s.keys.invalidate(k.ID)
	writeData(w, http.StatusOK, withSecret(k, raw))
	return nil
}
