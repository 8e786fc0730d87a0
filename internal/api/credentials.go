package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm/providers"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/vault"
)

func (s *Server) credentialRoutes() []route {
	const tag = "Credentials"
	return []route{
		{method: "GET", path: v1 + "/credentials", op: "listCredentials", tag: tag, scope: "credentials:read", summary: "List credentials",
			list: true,
			params: []param{{name: "type", typ: "string", enum: domain.CredentialTypes}, {name: "provider", typ: "string", desc: "Exact provider name."},
				{name: "q", typ: "string", desc: "Case-insensitive substring of the name or description."}},
			resp: domain.Credential{}, h: s.listCredentials},
		{method: "POST", path: v1 + "/credentials", op: "createCredential", tag: tag, scope: "credentials:write", summary: "Create a credential",
			body: domain.CredentialCreateRequest{}, resp: domain.Credential{}, status: http.StatusCreated, creates: true, h: s.createCredential},
		{method: "GET", path: v1 + "/credentials/{id}", op: "getCredential", tag: tag, scope: "credentials:read", summary: "Get a credential (masked)",
			resp: domain.Credential{}, h: byID(s, s.store.CredentialGet)},
		{method: "PATCH", path: v1 + "/credentials/{id}", op: "updateCredential", tag: tag, scope: "credentials:write",
			summary: "Update a credential's name, provider, description, metadata or value", body: domain.CredentialUpdateRequest{}, resp: domain.Credential{}, h: s.updateCredential},
		{method: "DELETE", path: v1 + "/credentials/{id}", op: "deleteCredential", tag: tag, scope: "credentials:write", summary: "Delete a credential",
			resp: domain.Credential{}, errs: []int{http.StatusConflict}, h: byID(s, s.store.CredentialDelete)},
		{method: "POST", path: v1 + "/credentials/{id}/validate", op: "validateCredential", tag: tag, scope: "credentials:write",
			summary: "Check a credential against its service",
			resp:    runtime.Validation{}, errs: []int{http.StatusUnprocessableEntity}, h: s.validateCredential},
	}
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

func (s *Server) createCredential(w http.ResponseWriter, r *http.Request) error {
	var req domain.CredentialCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := domain.FirstErr(req.Validate(), providers.CheckCredential(strings.TrimSpace(req.Provider), req.Metadata)); err != nil {
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
	var req domain.CredentialUpdateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	p := domain.CredentialPatch{Name: trimmed(req.Name), Provider: trimmed(req.Provider), Description: req.Description}
	if req.Metadata != nil {
		p.Metadata = ptr(domain.JSONObject(*req.Metadata))
	}
	if req.Value != nil {
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
		if err := providers.CheckCredential(provider, metadata); err != nil {
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
