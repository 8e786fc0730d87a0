package api

import (
	"net/http"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
)

type llmModelCreateRequest struct {
	ID                    string   `json:"id" minLength:"1" pattern:"\\S" maxLength:"200" doc:"The model id sent to the provider, e.g. llama3.1:8b or meta-llama/Llama-3.1-8B-Instruct."`
	Provider              string   `json:"provider" minLength:"1" pattern:"\\S" maxLength:"100" doc:"Whose credential serves it by default, e.g. ollama or openai_compatible."`
	Name                  string   `json:"name,omitempty" maxLength:"200" doc:"Display name (default: the id)."`
	Description           string   `json:"description,omitempty" maxLength:"2000"`
	ContextWindow         int      `json:"context_window" minimum:"1" maximum:"100000000" doc:"Tokens the model reads at most; chat history is trimmed to fit."`
	MaxOutputTokens       int      `json:"max_output_tokens,omitempty" minimum:"0" maximum:"100000000" doc:"Tokens the model writes at most (0: unknown)."`
	InputPricePerMillion  float64  `json:"input_price_per_million,omitempty" minimum:"0" maximum:"1000000" doc:"USD per million prompt tokens (0 for a model you host)."`
	OutputPricePerMillion float64  `json:"output_price_per_million,omitempty" minimum:"0" maximum:"1000000" doc:"USD per million completion tokens."`
	Capabilities          []string `json:"capabilities,omitempty" doc:"e.g. chat, tools, json_mode, reasoning, streaming."`
}

type llmModelUpdateRequest struct {
	Provider              *string   `json:"provider,omitempty" minLength:"1" pattern:"\\S" maxLength:"100"`
	Name                  *string   `json:"name,omitempty" minLength:"1" pattern:"\\S" maxLength:"200"`
	Description           *string   `json:"description,omitempty" maxLength:"2000"`
	ContextWindow         *int      `json:"context_window,omitempty" minimum:"1" maximum:"100000000"`
	MaxOutputTokens       *int      `json:"max_output_tokens,omitempty" minimum:"0" maximum:"100000000"`
	InputPricePerMillion  *float64  `json:"input_price_per_million,omitempty" minimum:"0" maximum:"1000000"`
	OutputPricePerMillion *float64  `json:"output_price_per_million,omitempty" minimum:"0" maximum:"1000000"`
	Capabilities          *[]string `json:"capabilities,omitempty"`
}

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
			body: llmModelCreateRequest{}, resp: domain.LLMModel{}, status: http.StatusCreated, creates: true, errs: []int{http.StatusConflict}, h: s.createLLMModel},
		{method: "GET", path: v1 + "/llm-models/{id}", op: "getLLMModel", tag: tag, scope: "agents:read", summary: "Get a model",
			resp: domain.LLMModel{}, h: s.getLLMModel},
		{method: "PATCH", path: v1 + "/llm-models/{id}", op: "updateLLMModel", tag: tag, scope: "agents:write", summary: "Update a workspace model",
			body: llmModelUpdateRequest{}, resp: domain.LLMModel{}, errs: []int{http.StatusForbidden}, h: s.updateLLMModel},
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
	if f.Source != "" {
		if err := domain.OneOf("source", f.Source, []string{domain.ModelSourceCatalog, domain.ModelSourceWorkspace}); err != nil {
			return badRequest("%s", err.Error())
		}
	}
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

func checkCapabilities(caps []string) error {
	if len(caps) > 32 {
		return domain.Invalid("capabilities", "must have at most 32 entries")
	}
	for i, c := range caps {
		if strings.TrimSpace(c) == "" || len(c) > 50 {
			return domain.Invalid("capabilities", "entry %d must be 1 to 50 characters", i)
		}
	}
	return nil
}

func (s *Server) createLLMModel(w http.ResponseWriter, r *http.Request) error {
	var req llmModelCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	req.ID, req.Provider = strings.TrimSpace(req.ID), strings.TrimSpace(req.Provider)
	if err := domain.FirstErr(domain.NotBlank("id", req.ID), domain.NotBlank("provider", req.Provider), checkCapabilities(req.Capabilities)); err != nil {
		return err
	}
	if strings.ContainsAny(req.ID, "\n\r\t") {
		return domain.Invalid("id", "must not contain control characters")
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
	var req llmModelUpdateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	m, err := s.workspaceModel(r)
	if err != nil {
		return err
	}
	p := domain.LLMModelPatch{ContextWindow: req.ContextWindow, MaxOutputTokens: req.MaxOutputTokens,
		InputPricePerMillion: req.InputPricePerMillion, OutputPricePerMillion: req.OutputPricePerMillion}
	if req.Provider != nil {
		v := strings.TrimSpace(*req.Provider)
		if err := domain.NotBlank("provider", v); err != nil {
			return err
		}
		p.Provider = &v
	}
	if p.Name, err = patchName(req.Name); err != nil {
		return err
	}
	if p.Description, err = patchDescription(req.Description); err != nil {
		return err
	}
	if req.Capabilities != nil {
		if err := checkCapabilities(*req.Capabilities); err != nil {
			return err
		}
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
