package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentplane/agentplane/internal/domain"
)

// ApprovalCreate records a pending approval.
func (s *Store) ApprovalCreate(ctx context.Context, a *domain.Approval) error {
	if a.ID == "" {
		a.ID = NewID()
	}
	if a.Kind == "" {
		a.Kind = domain.ApprovalCheckpoint
	}
	if a.Calls == nil {
		a.Calls = []domain.PendingCall{}
	}
	a.Status, a.RequestedAt = "pending", domain.Now()
	calls, _ := json.Marshal(a.Calls)
	choices, _ := json.Marshal(nonNil(a.Choices))
	var expires domain.Time
	if a.ExpiresAt != nil {
		expires = *a.ExpiresAt
	}
	_, err := s.exec(ctx, `INSERT INTO approvals (id, workspace_id, execution_id, agent_id, kind, checkpoint, description, awaiting, calls, question, choices,
		status, requested_at, expires_at, on_timeout)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
		a.ID, a.WorkspaceID, a.ExecutionID, a.AgentID, a.Kind, a.Checkpoint, a.Description, string(a.Awaiting), string(calls), a.Question, string(choices),
		a.Status, a.RequestedAt, expires, a.OnTimeout)
	if err != nil {
		return fmt.Errorf("insert approval: %w", err)
	}
	return nil
}

const approvalColumns = `p.id, p.workspace_id, p.execution_id, p.agent_id, COALESCE(a.name, ''), p.kind, p.checkpoint, p.description, p.awaiting,
	p.calls, p.question, p.choices, p.answer, p.status, p.comment, p.reason, p.decided_by, p.expires_at, p.on_timeout, p.requested_at, p.decided_at`

const approvalFrom = " FROM approvals p LEFT JOIN agents a ON a.id = p.agent_id"

func scanApproval(row interface{ Scan(...any) error }) (*domain.Approval, error) {
	var a domain.Approval
	var awaiting, calls, choices string
	var decided, expires domain.Time
	if err := row.Scan(&a.ID, &a.WorkspaceID, &a.ExecutionID, &a.AgentID, &a.AgentName, &a.Kind, &a.Checkpoint, &a.Description, &awaiting,
		&calls, &a.Question, &choices, &a.Answer, &a.Status, &a.Comment, &a.Reason, &a.DecidedBy, &expires, &a.OnTimeout, &a.RequestedAt, &decided); err != nil {
		return nil, err
	}
	a.Awaiting = json.RawMessage(awaiting)
	if err := json.Unmarshal([]byte(calls), &a.Calls); err != nil {
		return nil, fmt.Errorf("approval %s: calls: %w", a.ID, err)
	}
	if err := json.Unmarshal([]byte(choices), &a.Choices); err != nil {
		return nil, fmt.Errorf("approval %s: choices: %w", a.ID, err)
	}
	if a.Calls == nil {
		a.Calls = []domain.PendingCall{}
	}
	if len(a.Choices) == 0 {
		a.Choices = nil
	}
	if !decided.IsZero() {
		a.DecidedAt = &decided
	}
	if !expires.IsZero() {
		a.ExpiresAt = &expires
	}
	return &a, nil
}

// ApprovalList returns one page of approvals, newest first; status "" lists every status,
// executionID "" those of every execution.
func (s *Store) ApprovalList(ctx context.Context, ws, status, executionID string, p domain.Page) ([]*domain.Approval, int, error) {
	where, args := whereClause("p", ws, []cond{{"p.status = $%d", status}, {"p.execution_id = $%d", executionID}})
	rows, err := s.r.QueryContext(ctx, "SELECT "+approvalColumns+approvalFrom+where+" ORDER BY p.requested_at DESC, p.id DESC"+limitClause(p), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list approvals: %w", err)
	}
	items, err := collect(rows, scanApproval)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.listCount(ctx, p, len(items), "approvals p"+where, args)
	return items, total, err
}

// ApprovalGet returns one approval.
func (s *Store) ApprovalGet(ctx context.Context, ws, id string) (*domain.Approval, error) {
	a, err := scanApproval(s.r.QueryRowContext(ctx, "SELECT "+approvalColumns+approvalFrom+" WHERE p.workspace_id = $1 AND p.id = $2", ws, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("approval", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get approval %s: %w", id, err)
	}
	return a, nil
}

// ApprovalPending returns the pending approval of an execution, or nil, nil when it has none.
func (s *Store) ApprovalPending(ctx context.Context, ws, executionID string) (*domain.Approval, error) {
	a, err := scanApproval(s.r.QueryRowContext(ctx, "SELECT "+approvalColumns+approvalFrom+
		" WHERE p.workspace_id = $1 AND p.execution_id = $2 AND p.status = 'pending'", ws, executionID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pending approval of %s: %w", executionID, err)
	}
	return a, nil
}

// ApprovalsExpired returns up to limit pending approvals whose expires_at has passed, in
// every workspace, oldest expiry first: the leader's timer decides them.
func (s *Store) ApprovalsExpired(ctx context.Context, now domain.Time, limit int) ([]*domain.Approval, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+approvalColumns+approvalFrom+
		" WHERE p.status = 'pending' AND p.expires_at IS NOT NULL AND p.expires_at <= $1 ORDER BY p.expires_at, p.id LIMIT $2", now, limit)
	if err != nil {
		return nil, fmt.Errorf("list expired approvals: %w", err)
	}
	return collect(rows, scanApproval)
}

// ApprovalDecide closes the pending approval of an execution with a decision (approved,
// denied or cancelled); it returns nil, nil when none was pending.
func (s *Store) ApprovalDecide(ctx context.Context, ws, executionID string, d domain.ApprovalDecision) (*domain.Approval, error) {
	calls := ""
	if d.Calls != nil {
		raw, _ := json.Marshal(d.Calls)
		calls = string(raw)
	}
	var id string
	err := s.w.QueryRowContext(ctx, `UPDATE approvals SET status = $1, comment = $2, reason = $3, decided_at = $4, decided_by = $5, answer = $6,
		calls = CASE WHEN $7 = '' THEN calls ELSE $7 END
		WHERE workspace_id = $8 AND execution_id = $9 AND status = 'pending' RETURNING id`,
		d.Status, d.Comment, d.Reason, domain.Now(), d.DecidedBy, d.Answer, calls, ws, executionID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("decide approval of %s: %w", executionID, err)
	}
	return s.ApprovalGet(ctx, ws, id)
}
