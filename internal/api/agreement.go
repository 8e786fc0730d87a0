package api

import (
	"net/http"
	"strings"

	"github.com/agentplane/agentplane/internal/eval"
	"github.com/agentplane/agentplane/internal/store"
)

func (s *Server) agreementRoutes() []route {
	return []route{
		{method: "GET", path: v1 + "/scores/agreement", op: "scoreAgreement", tag: "Scores", scope: "scores:read", summary: "How far a judge agrees with people",
			desc: "Compares the scores of two names given to the same executions — typically an evaluator's (`judge`) and reviewers' (`human`): " +
				"for each execution with scores of both names, the latest of each. Answers `count`, `exact_agreement` (the share with the same value or label), " +
				"Cohen's `kappa` for categorical and boolean scores, Pearson's `pearson` for numeric ones. `judge_source` and `human_source` narrow each side to a source " +
				"(e.g. `eval` and `annotation`). Names of two data types are a 422. At most the 100,000 most recent executions are compared.",
			params: []param{{name: "judge", typ: "string", desc: "The judge's score name (required)."}, {name: "human", typ: "string", desc: "The person's score name (required)."},
				{name: "judge_source", typ: "string", desc: "Only the judge's scores of this source.", enum: store.ScoreSources},
				{name: "human_source", typ: "string", desc: "Only the person's scores of this source.", enum: store.ScoreSources}},
			resp: eval.Agreement{}, errs: []int{http.StatusUnprocessableEntity}, h: s.scoreAgreement},
	}
}

func (s *Server) scoreAgreement(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	judge, human := strings.TrimSpace(q.Get("judge")), strings.TrimSpace(q.Get("human"))
	if judge == "" || human == "" {
		return badRequest("judge and human are required: the two score names to compare")
	}
	for _, name := range []string{"judge_source", "human_source"} {
		if v := q.Get(name); v != "" {
			if err := oneOf(name, v, store.ScoreSources); err != nil {
				return badRequest("%s", err.Error())
			}
		}
	}
	pairs, err := s.store.ScorePairs(r.Context(), s.workspace(r), judge, q.Get("judge_source"), human, q.Get("human_source"))
	if err != nil {
		return err
	}
	a, err := eval.Agree(judge, human, pairs)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, a)
	return nil
}
