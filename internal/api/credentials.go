package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm/providers"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/vault"
)

// maxCredentialValue bounds a credential value in bytes.
const maxCredentialValue = 16 << 10

type credentialCreateRequest struct {
	Name        string         `json:"name" minLength:"1" pattern:"\\S" maxLength:"200" doc:"Display name."`
	Type        string         `json:"type" enum:"api_key,bearer_token,basic_auth,database_url,oauth2"`
	Provider    string         `json:"provider,omitempty" maxLength:"100" doc:"The service the credential is for, e.g. openai or postgres."`
	Description string         `json:"description,omitempty" maxLength:"2000"`
	Metadata    map[string]any `json:"metadata,omitempty" doc:"Non-secret settings. For a model provider: base_url (http or https; required for ollama and openai_compatible; with the version path for the Chat Completions family, e.g. http://localhost:11434/v1, the host root for anthropic and google) default (true: the only credential runs use for this provider when several exist) and weight (0 to 1000, default 1: without a default, the provider's credentials form a pool and each call goes to one drawn by weight; a credential answering 429 or 5xx cools down for every node; 0 keeps it out of the pool)."`
	Value       secretValue    `json:"value" minLength:"1" pattern:"\\S" maxLength:"16384" doc:"The secret. It is encrypted at rest and never returned: responses carry masked_value. Text as sent: a lone UTF-16 surrogate escape such as \\udc80, which JSON decoders silently replace, is a 422."`
}

type credentialUpdateRequest struct {
	Name        *string         `json:"name,omitempty" minLength:"1" pattern:"\\S" maxLength:"200"`
	Provider    *string         `json:"provider,omitempty" maxLength:"100"`
	Description *string         `json:"description,omitempty" maxLength:"2000"`
	Metadata    *map[string]any `json:"metadata,omitempty" doc:"Replaces the metadata object."`
	Value       *secretValue    `json:"value,omitempty" minLength:"1" pattern:"\\S" maxLength:"16384" doc:"A new secret (rotation); encrypted at rest and never returned. A lone UTF-16 surrogate escape is a 422, as on create."`
}

func (s *Server) credentialRoutes() []route {
	const tag = "Credentials"
	return []route{
		{method: "GET", path: v1 + "/credentials", op: "listCredentials", tag: tag, scope: "credentials:read", summary: "List credentials",
			list: true,
			params: []param{{name: "type", typ: "string", enum: domain.CredentialTypes}, {name: "provider", typ: "string", desc: "Exact provider name."},
				{name: "q", typ: "string", desc: "Case-insensitive substring of the name or description."}},
			resp: domain.Credential{}, h: s.listCredentials},
		{method: "POST", path: v1 + "/credentials", op: "createCredential", tag: tag, scope: "credentials:write", summary: "Create a credential",
			body: credentialCreateRequest{}, resp: domain.Credential{}, status: http.StatusCreated, creates: true, h: s.createCredential},
		{method: "GET", path: v1 + "/credentials/{id}", op: "getCredential", tag: tag, scope: "credentials:read", summary: "Get a credential (masked)",
			resp: domain.Credential{}, h: byID(s, s.store.CredentialGet)},
		{method: "PATCH", path: v1 + "/credentials/{id}", op: "updateCredential", tag: tag, scope: "credentials:write",
			summary: "Update a credential's name, provider, description, metadata or value", body: credentialUpdateRequest{}, resp: domain.Credential{}, h: s.updateCredential},
		{method: "DELETE", path: v1 + "/credentials/{id}", op: "deleteCredential", tag: tag, scope: "credentials:write", summary: "Delete a credential",
			resp: domain.Credential{}, errs: []int{http.StatusConflict}, h: byID(s, s.store.CredentialDelete)},
		{method: "POST", path: v1 + "/credentials/{id}/validate", op: "validateCredential", tag: tag, scope: "credentials:write",
			summary: "Check a credential against its service",
			resp:    runtime.Validation{}, errs: []int{http.StatusUnprocessableEntity}, h: s.validateCredential},
	}
}

// checkModelCredential validates the settings of a model-provider credential: its base URL
// (required where the provider has no public one), the default flag and the pool weight. Credentials of
// other services are not checked.
func checkModelCredential(provider string, metadata map[string]any) error {
	if !providers.Known(provider) {
		return nil
	}
	if _, err := providers.BaseURL(provider, metadata); err != nil {
		return errorf(http.StatusUnprocessableEntity, "%s", err.Error())
	}
	if d, ok := metadata["default"]; ok {
		if _, isBool := d.(bool); !isBool {
			return domain.Invalid("metadata.default", "must be true or false")
		}
	}
	if w, ok := metadata["weight"]; ok {
		if f, isNum := w.(float64); !isNum || f < 0 || f > 1000 {
			return domain.Invalid("metadata.weight", "must be a number from 0 to 1000 (its share of the provider's calls; 0 keeps it out of the pool)")
		}
	}
	return nil
}

func (s *Server) validateCredential(w http.ResponseWriter, r *http.Request) error {
	ws := s.workspace(r)
	c, err := s.store.CredentialGet(r.Context(), ws, pathID(r, "id"))
	if err != nil {
		return err
	}
	v, err := s.engine.ValidateCredential(r.Context(), ws, c)
	if err != nil {
		return err
	}
	if _, err := s.store.CredentialSetValidation(context.WithoutCancel(r.Context()), ws, c.ID, v.Valid, v.Message, v.CheckedAt); err != nil {
		return err
	}
	writeData(w, http.StatusOK, v)
	return nil
}

func (s *Server) listCredentials(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := domain.CredentialFilter{Type: q.Get("type"), Provider: q.Get("provider"), Query: q.Get("q")}
	// type is a documented enum: the route table checks it against the documented values.
	items, total, err := s.store.CredentialList(r.Context(), s.workspace(r), f, p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}

// secretValue is a credential value as sent. encoding/json turns a lone UTF-16 surrogate
// escape ("\udc80") into U+FFFD without a word, which would store a secret other than the one
// the caller holds and make it fail later for no visible reason: such a value is a 422 naming
// value instead. Raw invalid UTF-8 never gets this far: decode refuses the whole body (400).
type secretValue string

// UnmarshalJSON decodes a JSON string, refusing lone surrogate escapes.
func (v *secretValue) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '"' {
		if string(b) == "null" {
			return nil
		}
		return badRequest("value: expected string, got %s", jsonValueKind(b))
	}
	if hasLoneSurrogate(b) {
		return domain.Invalid("value", "must be valid Unicode text; it holds a lone UTF-16 surrogate escape (\\ud800 to \\udfff) that would be replaced")
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return badRequest("value: malformed string")
	}
	*v = secretValue(s)
	return nil
}

// jsonValueKind names the kind of a raw JSON value for an error message.
func jsonValueKind(b []byte) string {
	switch {
	case len(b) == 0:
		return "nothing"
	case b[0] == '{':
		return "object"
	case b[0] == '[':
		return "array"
	case b[0] == 't' || b[0] == 'f':
		return "boolean"
	}
	return "number"
}

// hasLoneSurrogate reports whether a raw JSON string holds a \uXXXX escape of a UTF-16
// surrogate that is not part of a high-low pair.
func hasLoneSurrogate(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		r, ok := unicodeEscapeAt(b, i)
		if !ok {
			i++ // another escape (\\, \", \n …): skip its character
			continue
		}
		i += 5
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		case r >= 0xD800 && r <= 0xDBFF:
			lo, ok := unicodeEscapeAt(b, i+1)
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return true
			}
			i += 6
		}
	}
	return false
}

// unicodeEscapeAt reads a \uXXXX escape starting at b[i].
func unicodeEscapeAt(b []byte, i int) (rune, bool) {
	if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 16)
	if err != nil {
		return 0, false
	}
	return rune(n), true
}

// checkCredentialValue validates a secret without ever echoing it.
func checkCredentialValue(v string) error {
	if strings.TrimSpace(v) == "" {
		return domain.Invalid("value", "is required and must not be empty")
	}
	if len(v) > maxCredentialValue {
		return domain.Invalid("value", "must be at most %d bytes", maxCredentialValue)
	}
	return nil
}

func (s *Server) createCredential(w http.ResponseWriter, r *http.Request) error {
	var req credentialCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := domain.FirstErr(domain.NotBlank("name", req.Name), checkCredentialValue(string(req.Value)),
		checkModelCredential(strings.TrimSpace(req.Provider), req.Metadata)); err != nil {
		return err
	}
	c, err := vault.CredentialCreate(r.Context(), s.store, &domain.Credential{
		WorkspaceID: s.workspace(r), Name: strings.TrimSpace(req.Name), Type: req.Type, Provider: strings.TrimSpace(req.Provider),
		Description: req.Description, Metadata: domain.JSONObject(req.Metadata),
	}, string(req.Value), s.cfg.Secrets)
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
	var p domain.CredentialPatch
	var err error
	if p.Name, err = patchName(req.Name); err != nil {
		return err
	}
	if req.Provider != nil {
		p.Provider = ptr(strings.TrimSpace(*req.Provider))
	}
	p.Description = req.Description
	if req.Metadata != nil {
		p.Metadata = ptr(domain.JSONObject(*req.Metadata))
	}
	if req.Value != nil {
		if err := checkCredentialValue(string(*req.Value)); err != nil {
			return err
		}
		p.Value = ptr(string(*req.Value))
	}
	if p.Provider != nil || p.Metadata != nil {
		cur, err := s.store.CredentialGet(r.Context(), s.workspace(r), pathID(r, "id"))
		if err != nil {
			return err
		}
		provider, metadata := cur.Provider, map[string]any(cur.Metadata)
		if p.Provider != nil {
			provider = *p.Provider
		}
		if p.Metadata != nil {
			metadata = *p.Metadata
		}
		if err := checkModelCredential(provider, metadata); err != nil {
			return err
		}
	}
	c, err := vault.CredentialUpdate(r.Context(), s.store, s.workspace(r), pathID(r, "id"), p, s.cfg.Secrets)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, c)
	return nil
}
