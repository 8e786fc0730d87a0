package api

import (
	"net/http"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
)

func (s *Server) llmModelRoutes() []route {
	const tag = "LLM models"
	return []route{
		{method: "GET", path: v1 + "/llm-models", op: "listLLMModels", tag: tag, scope: "agents:read", list: true,
			summary: "List the model catalog and the workspace's models",
			params: []param{{name: "provider", typ: "string", desc: "Provider slug, e.g. openai."},
				{name: "capability", typ: "string", desc: "Only models with this capability, e.g. tools."},
				{name: "q", typ: "string", desc: "Case-insensitive substring of the id or name."},
				{name: "source", typ: "string", enum: []string{domain.ModelSourceCatalog, domain.ModelSourceWorkspace}}},
			resp: domain.LLMModel{}, h: s.listLLMModels},
		{method: "POST", path: v1 + "/llm-models", op: "createLLMModel", tag: tag, scope: "agents:write", summary: "Register a workspace model",
			body: domain.LlmModelCreateRequest{}, resp: domain.LLMModel{}, status: http.StatusCreated, creates: true, errs: []int{http.StatusConflict}, h: s.createLLMModel},
		{method: "GET", path: v1 + "/llm-models/{id}", op: "getLLMModel", tag: tag, scope: "agents:read", summary: "Get a model",
			resp: domain.LLMModel{}, h: s.getLLMModel},
		{method: "PATCH", path: v1 + "/llm-models/{id}", op: "updateLLMModel", tag: tag, scope: "agents:write", summary: "Update a workspace model",
			body: domain.LlmModelUpdateRequest{}, resp: domain.LLMModel{}, errs: []int{http.StatusForbidden}, h: s.updateLLMModel},
		{method: "DELETE", path: v1 + "/llm-models/{id}", op: "deleteLLMModel", tag: tag, scope: "agents:write", summary: "Delete a workspace model",
			resp: domain.LLMModel{}, errs: []int{http.StatusForbidden}, h: s.deleteLLMModel},
	}
}

func (s *Server) listLLMModels(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := domain.LLMModelFilter{Provider: q.Get("provider"), Capability: q.Get("capability"), Query: q.Get("q"), Source: q.Get("source")}
	// source is a documented enum: the route table checks it against the documented values.
	items, total, err := s.store.LLMModelList(r.Context(), s.workspace(r), f, p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}

func (s *Server) getLLMModel(w http.ResponseWriter, r *http.Request) error {
	m, err := s.store.LLMModelGet(r.Context(), s.workspace(r), pathID(r, "id"))
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, m)
	return nil
}

func (s *Server) createLLMModel(w http.ResponseWriter, r *http.Request) error {
	var req domain.LlmModelCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	req.ID, req.Provider = strings.TrimSpace(req.ID), strings.TrimSpace(req.Provider)
	if err := req.Validate(); err != nil {
		return err
	}
	name := strings.TrimSpace(req.Name)
	if name == "" {
		name = req.ID
	}
	caps := req.Capabilities
	if caps == nil {
		caps = []string{}
	}
	m, err := s.store.LLMModelCreate(r.Context(), s.workspace(r), &domain.LLMModel{ID: req.ID, Provider: req.Provider, Name: name,
		Description: req.Description, ContextWindow: req.ContextWindow, MaxOutputTokens: req.MaxOutputTokens,
		InputPricePerMillion: req.InputPricePerMillion, OutputPricePerMillion: req.OutputPricePerMillion, Capabilities: caps})
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, m)
	return nil
}

// workspaceModel returns the workspace's own model id, refusing catalog entries (403).
func (s *Server) workspaceModel(r *http.Request) (*domain.LLMModel, error) {
	m, err := s.store.LLMModelGet(r.Context(), s.workspace(r), pathID(r, "id"))
	if err != nil {
		return nil, err
	}
	if m.Source == domain.ModelSourceCatalog {
		return nil, errorf(http.StatusForbidden, "llm model %s is a built-in catalog model and is read-only; register a workspace model under another id", m.ID)
	}
	return m, nil
}

func (s *Server) updateLLMModel(w http.ResponseWriter, r *http.Request) error {
	var req domain.LlmModelUpdateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	m, err := s.workspaceModel(r)
	if err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	p := domain.LLMModelPatch{ContextWindow: req.ContextWindow, MaxOutputTokens: req.MaxOutputTokens,
		InputPricePerMillion: req.InputPricePerMillion, OutputPricePerMillion: req.OutputPricePerMillion}
	p.Provider, p.Name = trimmed(req.Provider), trimmed(req.Name) // Validate has checked them
	p.Description = req.Description
	if req.Capabilities != nil {
		p.Capabilities = ptr(domain.Strings(*req.Capabilities))
	}
	out, err := s.store.LLMModelUpdate(r.Context(), s.workspace(r), m.ID, p)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, out)
	return nil
}

func (s *Server) deleteLLMModel(w http.ResponseWriter, r *http.Request) error {
	m, err := s.workspaceModel(r)
	if err != nil {
		return err
	}
	out, err := s.store.LLMModelDelete(r.Context(), s.workspace(r), m.ID)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, out)
	return nil
}
