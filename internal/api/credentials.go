package api

import (
	"net/http"
	"strings"

	"github.com/agentplane/agentplane/internal/store"
)

// maxCredentialValue bounds a credential value in bytes.
const maxCredentialValue = 16 << 10

type credentialCreateRequest struct {
	Name        string         `json:"name" maxLength:"200" doc:"Display name."`
	Type        string         `json:"type" enum:"api_key,bearer_token,basic_auth,database_url,oauth2"`
	Provider    string         `json:"provider,omitempty" maxLength:"100" doc:"The service the credential is for, e.g. openai or postgres."`
	Description string         `json:"description,omitempty" maxLength:"2000"`
	Metadata    map[string]any `json:"metadata,omitempty" doc:"Non-secret settings (header name, scopes, …)."`
	Value       string         `json:"value" maxLength:"16384" doc:"The secret. It is encrypted at rest and never returned: responses carry masked_value."`
}

type credentialUpdateRequest struct {
	Name        *string         `json:"name,omitempty" maxLength:"200"`
	Provider    *string         `json:"provider,omitempty" maxLength:"100"`
	Description *string         `json:"description,omitempty" maxLength:"2000"`
	Metadata    *map[string]any `json:"metadata,omitempty" doc:"Replaces the metadata object."`
	Value       *string         `json:"value,omitempty" maxLength:"16384" doc:"A new secret (rotation); encrypted at rest and never returned."`
}

func (s *Server) credentialRoutes() []route {
	const tag = "Credentials"
	return []route{
		{method: "GET", path: v1 + "/credentials", op: "listCredentials", tag: tag, scope: "credentials:read", summary: "List credentials",
			desc: "Values are never returned; each credential carries masked_value.", list: true,
			params: []param{{name: "type", typ: "string", enum: store.CredentialTypes}, {name: "provider", typ: "string", desc: "Exact provider name."},
				{name: "q", typ: "string", desc: "Case-insensitive substring of the name or description."}},
			resp: store.Credential{}, h: s.listCredentials},
		{method: "POST", path: v1 + "/credentials", op: "createCredential", tag: tag, scope: "credentials:write", summary: "Create a credential",
			desc: "The value is encrypted at rest; the response, like every later read, shows it only masked.",
			body: credentialCreateRequest{}, resp: store.Credential{}, status: http.StatusCreated, creates: true, h: s.createCredential},
		{method: "GET", path: v1 + "/credentials/{id}", op: "getCredential", tag: tag, scope: "credentials:read", summary: "Get a credential (masked)",
			resp: store.Credential{}, h: byID(s, s.store.CredentialGet)},
		{method: "PATCH", path: v1 + "/credentials/{id}", op: "updateCredential", tag: tag, scope: "credentials:write",
			summary: "Update a credential's name, provider, description, metadata or value", body: credentialUpdateRequest{}, resp: store.Credential{}, h: s.updateCredential},
		{method: "DELETE", path: v1 + "/credentials/{id}", op: "deleteCredential", tag: tag, scope: "credentials:write", summary: "Delete a credential",
			desc: "A credential still used by a data source or an MCP tool is not deleted (409 naming the user).",
			resp: store.Credential{}, errs: []int{http.StatusConflict}, h: byID(s, s.store.CredentialDelete)},
	}
}

func (s *Server) listCredentials(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := store.CredentialFilter{Type: q.Get("type"), Provider: q.Get("provider"), Query: q.Get("q")}
	if f.Type != "" {
		if err := oneOf("type", f.Type, store.CredentialTypes); err != nil {
			return badRequest("%s", err.Error())
		}
	}
	items, total, err := s.store.CredentialList(r.Context(), s.workspace(r), f, p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}

// checkCredentialValue validates a secret without ever echoing it.
func checkCredentialValue(v string) error {
	if strings.TrimSpace(v) == "" {
		return invalid("value", "is required and must not be empty")
	}
	if len(v) > maxCredentialValue {
		return invalid("value", "must be at most %d bytes", maxCredentialValue)
	}
	return nil
}

func (s *Server) createCredential(w http.ResponseWriter, r *http.Request) error {
	var req credentialCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := firstErr(required("name", req.Name), maxLen("name", req.Name, 200), oneOf("type", req.Type, store.CredentialTypes),
		maxLen("provider", req.Provider, 100), maxLen("description", req.Description, 2000), checkCredentialValue(req.Value)); err != nil {
		return err
	}
	c, err := s.store.CredentialCreate(r.Context(), &store.Credential{
		WorkspaceID: s.workspace(r), Name: strings.TrimSpace(req.Name), Type: req.Type, Provider: strings.TrimSpace(req.Provider),
		Description: req.Description, Metadata: store.JSONObject(req.Metadata),
	}, req.Value, s.cfg.Secrets)
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, c)
	return nil
}

func (s *Server) updateCredential(w http.ResponseWriter, r *http.Request) error {
	var req credentialUpdateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	var p store.CredentialPatch
	var err error
	if p.Name, err = patchName(req.Name); err != nil {
		return err
	}
	if req.Provider != nil {
		if err := maxLen("provider", *req.Provider, 100); err != nil {
			return err
		}
		p.Provider = ptr(strings.TrimSpace(*req.Provider))
	}
	if p.Description, err = patchDescription(req.Description); err != nil {
		return err
	}
	if req.Metadata != nil {
		p.Metadata = ptr(store.JSONObject(*req.Metadata))
	}
	if req.Value != nil {
		if err := checkCredentialValue(*req.Value); err != nil {
			return err
		}
		p.Value = req.Value
	}
	c, err := s.store.CredentialUpdate(r.Context(), s.workspace(r), pathID(r, "id"), p, s.cfg.Secrets)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, c)
	return nil
}
