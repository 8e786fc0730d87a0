package api

import (
	"net/http"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/eval"
	"github.com/agentplane/agentplane/internal/store"
)

type ruleFilterRequest struct {
	Status   []string       `json:"status,omitempty" doc:"Final statuses to score (completed, failed, cancelled, rejected); default [\"completed\"]."`
	Source   []string       `json:"source,omitempty" doc:"Sources to score (api, chat, webhook, schedule, …); empty for any."`
	Metadata map[string]any `json:"metadata,omitempty" doc:"Metadata values the execution must have (equal as JSON); empty for any."`
}

func (f *ruleFilterRequest) filter() domain.RuleFilter {
	if f == nil {
		return domain.RuleFilter{}
	}
	return domain.RuleFilter{Status: f.Status, Source: f.Source, Metadata: f.Metadata}
}

type evaluationRuleCreateRequest struct {
	EvaluatorID string             `json:"evaluator_id" minLength:"1" pattern:"\\S" doc:"The evaluator that scores the executions."`
	AgentID     *string            `json:"agent_id,omitempty" doc:"Only this agent's executions; left out (or null) for every agent."`
	Sampling    *float64           `json:"sampling,omitempty" minimum:"0" maximum:"1" doc:"The share of matching executions to score, from 0 to 1 (default 1: all)."`
	Filter      *ruleFilterRequest `json:"filter,omitempty"`
	Enabled     *bool              `json:"enabled,omitempty" doc:"Default true."`
}

type evaluationRuleUpdateRequest struct {
	EvaluatorID *string            `json:"evaluator_id,omitempty" minLength:"1" pattern:"\\S"`
	AgentID     *string            `json:"agent_id,omitempty" nullable:"true" doc:"Another agent; null for every agent."`
	Sampling    *float64           `json:"sampling,omitempty" minimum:"0" maximum:"1"`
	Filter      *ruleFilterRequest `json:"filter,omitempty" doc:"Replaces the whole filter."`
	Enabled     *bool              `json:"enabled,omitempty"`
}

func (s *Server) evaluationRuleRoutes() []route {
	const tag = "Evaluation rules"
	return []route{
		{method: "GET", path: v1 + "/evaluation-rules", op: "listEvaluationRules", tag: tag, scope: "scores:read", summary: "List evaluation rules",
			list: true,
			params: []param{{name: "evaluator_id", typ: "string", desc: "Only rules of this evaluator."},
				{name: "agent_id", typ: "string", desc: "Only rules for this agent (not those for every agent)."}},
			resp: domain.EvaluationRule{}, h: s.listEvaluationRules},
		{method: "POST", path: v1 + "/evaluation-rules", op: "createEvaluationRule", tag: tag, scope: "scores:write", summary: "Create an evaluation rule",
			body: evaluationRuleCreateRequest{}, resp: domain.EvaluationRule{}, status: http.StatusCreated, creates: true, h: s.createEvaluationRule},
		{method: "GET", path: v1 + "/evaluation-rules/{id}", op: "getEvaluationRule", tag: tag, scope: "scores:read", summary: "Get an evaluation rule",
			resp: domain.EvaluationRule{}, h: byID(s, s.store.EvaluationRuleGet)},
		{method: "PATCH", path: v1 + "/evaluation-rules/{id}", op: "updateEvaluationRule", tag: tag, scope: "scores:write", summary: "Update an evaluation rule",
			body: evaluationRuleUpdateRequest{}, resp: domain.EvaluationRule{}, h: s.updateEvaluationRule},
		{method: "GET", path: v1 + "/evaluation-rules/{id}/judgments", op: "listEvaluationJudgments", tag: tag, scope: "scores:read", summary: "List a rule's judgments",
			list:   true,
			params: []param{{name: "status", typ: "string", desc: "Only judgments in this state.", enum: domain.JudgmentStatuses}},
			resp:   domain.Judgment{}, h: childListByStatus(s, s.store.JudgmentRuleList)},
		{method: "DELETE", path: v1 + "/evaluation-rules/{id}", op: "deleteEvaluationRule", tag: tag, scope: "scores:write", summary: "Delete an evaluation rule",
			resp: domain.EvaluationRule{}, h: byID(s, s.store.EvaluationRuleDelete)},
	}
}

func (s *Server) listEvaluationRules(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	items, total, err := s.store.EvaluationRuleList(r.Context(), s.workspace(r),
		domain.EvaluationRuleFilter{EvaluatorID: q.Get("evaluator_id"), AgentID: q.Get("agent_id")}, p)
	if err != nil {
		return err
	}
	writeList(w, items, p, total)
	return nil
}

func (s *Server) createEvaluationRule(w http.ResponseWriter, r *http.Request) error {
	var req evaluationRuleCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	rule := &domain.EvaluationRule{WorkspaceID: s.workspace(r), EvaluatorID: req.EvaluatorID, AgentID: emptyNil(req.AgentID),
		Sampling: 1, Filter: req.Filter.filter(), Enabled: true}
	setIfPresent(&rule.Sampling, req.Sampling)
	setIfPresent(&rule.Enabled, req.Enabled)
	if err := eval.PrepareRule(r.Context(), s.store, rule); err != nil {
		return err
	}
	created, err := s.store.EvaluationRuleCreate(r.Context(), rule)
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, created)
	return nil
}

func (s *Server) updateEvaluationRule(w http.ResponseWriter, r *http.Request) error {
	var req evaluationRuleUpdateRequest
	body, err := decodeKeep(w, r, &req)
	if err != nil {
		return err
	}
	var out *domain.EvaluationRule
	err = s.store.InTx(r.Context(), func(tx *store.Store) error {
		rule, err := tx.EvaluationRuleGet(r.Context(), s.workspace(r), pathID(r, "id"))
		if err != nil {
			return err
		}
		setIfPresent(&rule.EvaluatorID, req.EvaluatorID)
		switch {
		case isNullField(body, "agent_id"):
			rule.AgentID = nil
		case req.AgentID != nil:
			rule.AgentID = emptyNil(req.AgentID)
		}
		setIfPresent(&rule.Sampling, req.Sampling)
		setIfPresent(&rule.Enabled, req.Enabled)
		if req.Filter != nil {
			rule.Filter = req.Filter.filter()
		}
		if err := eval.PrepareRule(r.Context(), tx, rule); err != nil {
			return err
		}
		out, err = tx.EvaluationRuleReplace(r.Context(), rule)
		return err
	})
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, out)
	return nil
}
