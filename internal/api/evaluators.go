package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/eval"
	"github.com/agentplane/agentplane/internal/store"
)

type evaluatorUpdateRequest struct {
	Name          *string         `json:"name,omitempty" minLength:"1" pattern:"\\S" maxLength:"200"`
	Description   *string         `json:"description,omitempty" maxLength:"2000"`
	Type          *string         `json:"type,omitempty" doc:"The evaluator type."`
	Config        *map[string]any `json:"config,omitempty" doc:"Replaces the whole object."`
	ScoreName     *string         `json:"score_name,omitempty" maxLength:"200"`
	ScoreConfigID *string         `json:"score_config_id,omitempty" nullable:"true" doc:"A new score config; null gives scores by name alone."`
}

type evaluatorTestRequest struct {
	Input          map[string]any  `json:"input,omitempty"`
	Output         json.RawMessage `json:"output" required:"true" doc:"The output to judge: any JSON (an agent's answer is {\"content\": text})."`
	ExpectedOutput json.RawMessage `json:"expected_output,omitempty"`
	Metadata       map[string]any  `json:"metadata,omitempty"`
}

func (s *Server) evaluatorRoutes() []route {
	const tag = "Evaluators"
	return []route{
		{method: "GET", path: v1 + "/evaluators", op: "listEvaluators", tag: tag, scope: "scores:read", summary: "List evaluators",
			list: true,
			params: []param{{name: "type", typ: "string", desc: "Only evaluators of this type.", enum: eval.Types()},
				{name: "name", typ: "string", desc: "Only the evaluator of this name."},
				{name: "q", typ: "string", desc: "Case-insensitive substring of the name or description."}},
			resp: domain.Evaluator{}, h: s.listEvaluators},
		{method: "POST", path: v1 + "/evaluators", op: "createEvaluator", tag: tag, scope: "scores:write", summary: "Create an evaluator",
			body: domain.EvaluatorCreateRequest{}, resp: domain.Evaluator{}, status: http.StatusCreated, creates: true, h: s.createEvaluator},
		{method: "GET", path: v1 + "/evaluators/{id}", op: "getEvaluator", tag: tag, scope: "scores:read", summary: "Get an evaluator",
			resp: domain.Evaluator{}, h: byID(s, s.store.EvaluatorGet)},
		{method: "PATCH", path: v1 + "/evaluators/{id}", op: "updateEvaluator", tag: tag, scope: "scores:write", summary: "Update an evaluator",
			body: evaluatorUpdateRequest{}, resp: domain.Evaluator{}, errs: []int{http.StatusConflict}, h: s.updateEvaluator},
		{method: "DELETE", path: v1 + "/evaluators/{id}", op: "deleteEvaluator", tag: tag, scope: "scores:write", summary: "Delete an evaluator",
			resp: domain.Evaluator{}, h: byID(s, s.store.EvaluatorDelete)},
		{method: "POST", path: v1 + "/evaluators/{id}/test", op: "testEvaluator", tag: tag, scope: "scores:read", summary: "Score an output without storing it",
			body: evaluatorTestRequest{}, resp: eval.EvaluationResult{}, h: s.testEvaluator},
	}
}

func (s *Server) listEvaluators(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := domain.EvaluatorFilter{Type: q.Get("type"), Name: q.Get("name"), Query: q.Get("q")}
	// type is a documented enum: the route table checks it against the documented values.
	items, total, err := s.store.EvaluatorList(r.Context(), s.workspace(r), f, p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}

func (s *Server) createEvaluator(w http.ResponseWriter, r *http.Request) error {
	var req domain.EvaluatorCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	ev := &domain.Evaluator{WorkspaceID: s.workspace(r), Name: strings.TrimSpace(req.Name), Description: req.Description, Type: req.Type,
		Config: req.Config, ScoreName: strings.TrimSpace(req.ScoreName), ScoreConfigID: emptyNil(req.ScoreConfigID)}
	if err := eval.Prepare(r.Context(), s.store, ev); err != nil {
		return err
	}
	created, err := s.store.EvaluatorCreate(r.Context(), ev)
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, created)
	return nil
}

func (s *Server) updateEvaluator(w http.ResponseWriter, r *http.Request) error {
	var req evaluatorUpdateRequest
	np, err := decodeNamedPatch(w, r, &req, &req.Name, &req.Description)
	if err != nil {
		return err
	}
	var out *domain.Evaluator
	err = s.store.InTx(r.Context(), func(tx *store.Store) error {
		ev, err := tx.EvaluatorGet(r.Context(), s.workspace(r), pathID(r, "id"))
		if err != nil {
			return err
		}
		setIfPresent(&ev.Name, np.name)
		setIfPresent(&ev.Description, np.desc)
		setIfPresent(&ev.Type, req.Type)
		if req.Config != nil {
			ev.Config = *req.Config
		}
		switch {
		case isNullField(np.body, "score_config_id"):
			ev.ScoreConfigID, ev.ScoreName = nil, ev.Name
		case req.ScoreConfigID != nil:
			ev.ScoreConfigID, ev.ScoreName = emptyNil(req.ScoreConfigID), ""
		}
		if req.ScoreName != nil {
			ev.ScoreName = strings.TrimSpace(*req.ScoreName)
		}
		if err := eval.Prepare(r.Context(), tx, ev); err != nil {
			return err
		}
		out, err = tx.EvaluatorReplace(r.Context(), ev)
		return err
	})
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, out)
	return nil
}

func (s *Server) testEvaluator(w http.ResponseWriter, r *http.Request) error {
	var req evaluatorTestRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	ev, err := s.store.EvaluatorGet(r.Context(), s.workspace(r), pathID(r, "id"))
	if err != nil {
		return err
	}
	// output is required: the document says so.
	res, err := eval.Run(r.Context(), s.store, s.engine.Judge, ev, eval.Case{Input: req.Input, Output: req.Output, ExpectedOutput: req.ExpectedOutput, Metadata: req.Metadata})
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, res)
	return nil
}

// emptyNil treats an empty id as absent.
func emptyNil(id *string) *string {
	if id == nil || strings.TrimSpace(*id) == "" {
		return nil
	}
	return id
}
