package api

import (
	"net/http"

	"github.com/agentplane/agentplane/internal/store"
)

func (s *Server) llmModelRoutes() []route {
	const tag = "LLM models"
	return []route{
		{method: "GET", path: v1 + "/llm-models", op: "listLLMModels", tag: tag, scope: "agents:read", list: true,
			summary: "List the model catalog", desc: "Ordered by provider, then id. Prices are USD per million tokens.",
			params: []param{{name: "provider", typ: "string", desc: "Provider slug, e.g. openai."},
				{name: "capability", typ: "string", desc: "Only models with this capability, e.g. tools."},
				{name: "q", typ: "string", desc: "Case-insensitive substring of the id or name."}},
			resp: store.LLMModel{}, h: s.listLLMModels},
		{method: "GET", path: v1 + "/llm-models/{id}", op: "getLLMModel", tag: tag, scope: "agents:read", summary: "Get a model",
			resp: store.LLMModel{}, h: s.getLLMModel},
	}
}

func (s *Server) listLLMModels(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	items, total, err := s.store.LLMModelList(r.Context(), store.LLMModelFilter{Provider: q.Get("provider"), Capability: q.Get("capability"), Query: q.Get("q")}, p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}

func (s *Server) getLLMModel(w http.ResponseWriter, r *http.Request) error {
	m, err := s.store.LLMModelGet(r.Context(), pathID(r, "id"))
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, m)
	return nil
}
