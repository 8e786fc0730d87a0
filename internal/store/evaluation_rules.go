package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

const evaluationRuleColumns = `id, workspace_id, evaluator_id, agent_id, sampling, filter, enabled,
	(SELECT count(*) FROM evaluation_judgments j WHERE j.rule_id = evaluation_rules.id AND j.status = 'pending'),
	(SELECT count(*) FROM evaluation_judgments j WHERE j.rule_id = evaluation_rules.id AND j.status = 'completed'),
	(SELECT count(*) FROM evaluation_judgments j WHERE j.rule_id = evaluation_rules.id AND j.status = 'failed'),
	created_at, updated_at`

func scanEvaluationRule(row interface{ Scan(...any) error }) (*domain.EvaluationRule, error) {
	var r domain.EvaluationRule
	j := &r.Judgments
	if err := row.Scan(&r.ID, &r.WorkspaceID, &r.EvaluatorID, &r.AgentID, &r.Sampling, jsonCol{&r.Filter}, &r.Enabled,
		&j.Pending, &j.Completed, &j.Failed, &r.CreatedAt, &r.UpdatedAt); err != nil {
		return nil, err
	}
	r.Filter = ruleFilterNormal(r.Filter)
	return &r, nil
}

// normal gives the filter's lists and object as empty rather than null.
func ruleFilterNormal(f domain.RuleFilter) domain.RuleFilter {
	if f.Status == nil {
		f.Status = []string{}
	}
	if f.Source == nil {
		f.Source = []string{}
	}
	if f.Metadata == nil {
		f.Metadata = domain.JSONObject{}
	}
	return f
}

// EvaluationRuleList returns one page of a workspace's rules, newest first, and the total count.
func (s *Store) EvaluationRuleList(ctx context.Context, ws string, f domain.EvaluationRuleFilter, p domain.Page) ([]*domain.EvaluationRule, int, error) {
	where, args := whereClause("", ws, []cond{{"evaluator_id = $%d", f.EvaluatorID}, {"agent_id = $%d", f.AgentID}})
	return listPage(ctx, s, "evaluation_rules", evaluationRuleColumns, where, args, "", p, scanEvaluationRule)
}

// EvaluationRuleGet returns one rule of the workspace.
func (s *Store) EvaluationRuleGet(ctx context.Context, ws, id string) (*domain.EvaluationRule, error) {
	return getByID(ctx, s, "evaluation rule", "evaluation_rules", evaluationRuleColumns, ws, id, scanEvaluationRule)
}

// EvaluationRuleCreate inserts a rule (checked by the caller, package eval).
func (s *Store) EvaluationRuleCreate(ctx context.Context, r *domain.EvaluationRule) (*domain.EvaluationRule, error) {
	if r.ID == "" {
		r.ID = NewID()
	}
	filter, err := jsonValue(ruleFilterNormal(r.Filter))
	if err != nil {
		return nil, fmt.Errorf("encode filter: %w", err)
	}
	_, err = s.exec(ctx, `INSERT INTO evaluation_rules (id, workspace_id, evaluator_id, agent_id, sampling, filter, enabled, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`, r.ID, r.WorkspaceID, r.EvaluatorID, r.AgentID, r.Sampling, filter, r.Enabled, domain.Now())
	if err != nil {
		return nil, fmt.Errorf("insert evaluation rule: %w", err)
	}
	return s.EvaluationRuleGet(ctx, r.WorkspaceID, r.ID)
}

// EvaluationRuleReplace writes every changeable field of a rule (the caller merged a patch
// into the stored one and checked the result).
func (s *Store) EvaluationRuleReplace(ctx context.Context, r *domain.EvaluationRule) (*domain.EvaluationRule, error) {
	agent := sql.NullString{String: domain.Deref(r.AgentID), Valid: r.AgentID != nil}
	filter := jsonArg{ruleFilterNormal(r.Filter)}
	err := s.update(ctx, "evaluation rule", "evaluation_rules", r.WorkspaceID, r.ID, []set{
		{"evaluator_id", &r.EvaluatorID}, {"agent_id", &agent}, {"sampling", &r.Sampling}, {"filter", &filter}, {"enabled", &r.Enabled},
	})
	if err != nil {
		return nil, err
	}
	return s.EvaluationRuleGet(ctx, r.WorkspaceID, r.ID)
}

// EvaluationRuleDelete removes a rule with its pending judgments and returns it as it was;
// the scores it gave stay.
func (s *Store) EvaluationRuleDelete(ctx context.Context, ws, id string) (*domain.EvaluationRule, error) {
	return deleteAsWas(ctx, s, "evaluation rule", "evaluation_rules", ws, id, (*Store).EvaluationRuleGet, nil)
}

// EvaluationRulesFor returns the enabled rules that may score a run of agentID: the agent's
// own and those for every agent. The terminal hook reads them as each execution ends.
func (s *Store) EvaluationRulesFor(ctx context.Context, ws, agentID string) ([]*domain.EvaluationRule, error) {
	if e := s.endedFor(ws, agentID); e != nil && !e.rules {
		return nil, nil // the hooks' read found none
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, workspace_id, evaluator_id, agent_id, sampling, filter, enabled, 0, 0, 0, created_at, updated_at
		FROM evaluation_rules WHERE workspace_id = $1 AND enabled = $2 AND (agent_id IS NULL OR agent_id = $3) ORDER BY created_at, id`, ws, true, agentID)
	if err != nil {
		return nil, fmt.Errorf("rules of agent %s: %w", agentID, err)
	}
	return collect(rows, scanEvaluationRule)
}

// JudgmentCreate records that rule ruleID is to score execution execID, due at once; a
// judgment of that pair that exists already is left as it is.
func (s *Store) JudgmentCreate(ctx context.Context, ws, ruleID, execID string) error {
	now := domain.Now()
	_, err := s.exec(ctx, `INSERT INTO evaluation_judgments (id, workspace_id, rule_id, execution_id, status, next_attempt_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, 'pending', $5, $6, $6) ON CONFLICT (rule_id, execution_id) DO NOTHING`,
		NewID(), ws, ruleID, execID, now.UnixMilli(), now)
	if err != nil {
		return fmt.Errorf("record judgment of %s by rule %s: %w", execID, ruleID, err)
	}
	return nil
}

const judgmentColumns = "id, workspace_id, rule_id, execution_id, status, attempts, score_id, last_error, created_at, updated_at"

func scanJudgment(row interface{ Scan(...any) error }) (*domain.Judgment, error) {
	var j domain.Judgment
	err := row.Scan(&j.ID, &j.WorkspaceID, &j.RuleID, &j.ExecutionID, &j.Status, &j.Attempts, &j.ScoreID, &j.LastError, &j.CreatedAt, &j.UpdatedAt)
	return &j, err
}

// JudgmentList returns the judgments of an execution (by any rule), oldest first.
func (s *Store) JudgmentList(ctx context.Context, ws, execID string) ([]*domain.Judgment, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+judgmentColumns+` FROM evaluation_judgments WHERE workspace_id = $1 AND execution_id = $2
		ORDER BY created_at, id`, ws, execID)
	if err != nil {
		return nil, fmt.Errorf("judgments of %s: %w", execID, err)
	}
	return collect(rows, scanJudgment)
}

// JudgmentRuleList returns one page of a rule's judgments, newest first, optionally of one
// status, and the total.
func (s *Store) JudgmentRuleList(ctx context.Context, ws, ruleID, status string, p domain.Page) ([]*domain.Judgment, int, error) {
	if _, err := s.EvaluationRuleGet(ctx, ws, ruleID); err != nil {
		return nil, 0, err
	}
	where, args := whereClause("", ws, []cond{{"rule_id = $%d", ruleID}, {"status = $%d", status}})
	return listPage(ctx, s, "evaluation_judgments", judgmentColumns, where, args, "", p, scanJudgment)
}

// JudgmentClaim takes up to limit pending judgments due at now for one attempt by node: each
// gets its attempt counted and a lease of the given length (on the database's clock), during
// which no other node takes it. A node that stops mid-judgment leaves its lease to expire;
// the row is then due again.
func (s *Store) JudgmentClaim(ctx context.Context, node string, now time.Time, lease time.Duration, limit int) ([]*domain.Judgment, error) {
	return claimDue(ctx, s, "evaluation_judgments", "judgments", judgmentColumns, node, now, lease, limit, scanJudgment)
}

// JudgmentComplete writes the score of attempt number `attempt` of judgment id by node and
// marks the judgment completed, in one transaction. It reports false, writing nothing, when
// the node no longer holds that attempt (its lease expired and another node took it over):
// so a judgment gives one score, however many nodes judged it.
func (s *Store) JudgmentComplete(ctx context.Context, id, node string, attempt int, sc *domain.Score) (bool, error) {
	held := false
	err := s.InTx(ctx, func(tx *Store) error {
		if sc.ID == "" {
			sc.ID = NewID()
		}
		res, err := tx.exec(ctx, `UPDATE evaluation_judgments SET status = 'completed', score_id = $1, last_error = NULL,
			lease_owner = NULL, lease_expires_at = NULL, updated_at = $2
			WHERE id = $3 AND lease_owner = $4 AND attempts = $5 AND status = 'pending'`, sc.ID, domain.Now(), id, node, attempt)
		if err != nil {
			return fmt.Errorf("complete judgment %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return nil
		}
		held = true
		return tx.scoreInsert(ctx, sc)
	})
	if err != nil {
		held = false
	}
	return held, err
}

// JudgmentRecordFailure writes a failed attempt of judgment id by node and ends its lease:
// the judgment is due again at next, or failed for good when next is zero. It reports false,
// writing nothing, when the node no longer holds that attempt.
func (s *Store) JudgmentRecordFailure(ctx context.Context, id, node string, attempt int, why string, next time.Time) (bool, error) {
	status, due := domain.JudgmentPending, next.UnixMilli()
	if next.IsZero() {
		status, due = domain.JudgmentFailed, domain.Now().UnixMilli()
	}
	res, err := s.exec(ctx, `UPDATE evaluation_judgments SET status = $1, next_attempt_at = $2, last_error = $3,
		lease_owner = NULL, lease_expires_at = NULL, updated_at = $4
		WHERE id = $5 AND lease_owner = $6 AND attempts = $7 AND status = 'pending'`, status, due, why, domain.Now(), id, node, attempt)
	if err != nil {
		return false, fmt.Errorf("record judgment %s: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// JudgmentRenew extends node's lease on attempt number `attempt` of judgment id by lease
// (from now, on the database's clock) while the judgment is made. It reports false when the
// node no longer holds that attempt.
func (s *Store) JudgmentRenew(ctx context.Context, id, node string, attempt int, lease time.Duration) (bool, error) {
	res, err := s.exec(ctx, `UPDATE evaluation_judgments SET lease_expires_at = `+s.nowMS()+` + $1
		WHERE id = $2 AND lease_owner = $3 AND attempts = $4 AND status = 'pending'`, lease.Milliseconds(), id, node, attempt)
	if err != nil {
		return false, fmt.Errorf("renew judgment %s: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}
