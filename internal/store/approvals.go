package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// Approval is a human decision an execution waits for at a checkpoint.
type Approval struct {
	ID          string          `json:"id"`
	WorkspaceID string          `json:"workspace_id"`
	ExecutionID string          `json:"execution_id"`
	AgentID     string          `json:"agent_id"`
	AgentName   string          `json:"agent_name"`
	Checkpoint  string          `json:"checkpoint"`
	Description string          `json:"description"`
	Awaiting    json.RawMessage `json:"awaiting" doc:"What is awaiting the decision, e.g. {\"draft_output\": …}."`
	Status      string          `json:"status" enum:"pending,approved,denied,cancelled"`
	Comment     string          `json:"comment"`
	Reason      string          `json:"reason"`
	RequestedAt Time            `json:"requested_at"`
	DecidedAt   *Time           `json:"decided_at"`
}

// ApprovalCreate records a pending approval.
func (s *Store) ApprovalCreate(ctx context.Context, a *Approval) error {
	if a.ID == "" {
		a.ID = NewID()
	}
	a.Status, a.RequestedAt = "pending", Now()
	_, err := s.exec(ctx, `INSERT INTO approvals (id, workspace_id, execution_id, agent_id, checkpoint, description, awaiting, status, requested_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		a.ID, a.WorkspaceID, a.ExecutionID, a.AgentID, a.Checkpoint, a.Description, string(a.Awaiting), a.Status, a.RequestedAt)
	if err != nil {
		return fmt.Errorf("insert approval: %w", err)
	}
	return nil
}

const approvalColumns = `p.id, p.workspace_id, p.execution_id, p.agent_id, COALESCE(a.name, ''), p.checkpoint, p.description, p.awaiting,
	p.status, p.comment, p.reason, p.requested_at, p.decided_at`

const approvalFrom = " FROM approvals p LEFT JOIN agents a ON a.id = p.agent_id"

func scanApproval(row interface{ Scan(...any) error }) (*Approval, error) {
	var a Approval
	var awaiting string
	var decided Time
	if err := row.Scan(&a.ID, &a.WorkspaceID, &a.ExecutionID, &a.AgentID, &a.AgentName, &a.Checkpoint, &a.Description, &awaiting,
		&a.Status, &a.Comment, &a.Reason, &a.RequestedAt, &decided); err != nil {
		return nil, err
	}
	a.Awaiting = json.RawMessage(awaiting)
	if !decided.IsZero() {
		a.DecidedAt = &decided
	}
	return &a, nil
}

// ApprovalList returns one page of approvals, newest first; status "" lists every status.
func (s *Store) ApprovalList(ctx context.Context, ws, status string, p Page) ([]*Approval, int, error) {
	where, args := whereClause("p", ws, []cond{{"p.status = $%d", status}})
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
func (s *Store) ApprovalGet(ctx context.Context, ws, id string) (*Approval, error) {
	a, err := scanApproval(s.r.QueryRowContext(ctx, "SELECT "+approvalColumns+approvalFrom+" WHERE p.workspace_id = $1 AND p.id = $2", ws, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("approval", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get approval %s: %w", id, err)
	}
	return a, nil
}

// ApprovalDecide closes the pending approval of an execution with a decision
// (approved, denied or cancelled); it returns nil, nil when none was pending.
func (s *Store) ApprovalDecide(ctx context.Context, ws, executionID, status, comment, reason string) (*Approval, error) {
	var id string
	err := s.w.QueryRowContext(ctx, `UPDATE approvals SET status = $1, comment = $2, reason = $3, decided_at = $4
		WHERE workspace_id = $5 AND execution_id = $6 AND status = 'pending' RETURNING id`,
		status, comment, reason, Now(), ws, executionID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("decide approval of %s: %w", executionID, err)
	}
	return s.ApprovalGet(ctx, ws, id)
}
