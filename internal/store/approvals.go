package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// Approval kinds: a checkpoint of config.approval.checkpoints, tool calls that
// config.approval.tools holds back, or a question of the ask_user tool.
const (
	ApprovalCheckpoint = "checkpoint"
	ApprovalTools      = "tools"
	ApprovalQuestion   = "question"
)

// Approval is a human decision an execution waits for at a checkpoint.
type Approval struct {
	ID          string          `json:"id"`
	WorkspaceID string          `json:"workspace_id"`
	ExecutionID string          `json:"execution_id"`
	AgentID     string          `json:"agent_id"`
	AgentName   string          `json:"agent_name"`
	Kind        string          `json:"kind" enum:"checkpoint,tools,question" doc:"checkpoint (config.approval.checkpoints), tools (tool calls config.approval.tools holds back) or question (the ask_user tool)."`
	Checkpoint  string          `json:"checkpoint"`
	Description string          `json:"description"`
	Awaiting    json.RawMessage `json:"awaiting" doc:"What is awaiting the decision, e.g. {\"draft_output\": …}."`
	// Calls are the tool calls held back (tools and question kinds), each with its decision
	// once decided.
	Calls     []PendingCall `json:"calls" doc:"The tool calls waiting for the decision (kinds tools and question), each with its decision once decided."`
	Question  string        `json:"question,omitempty" doc:"The question of an approval of kind question."`
	Choices   []string      `json:"choices,omitempty" doc:"The answers a question offers, if it offers some."`
	Answer    string        `json:"answer,omitempty" doc:"The answer given to a question."`
	Status    string        `json:"status" enum:"pending,approved,denied,cancelled"`
	Comment   string        `json:"comment"`
	Reason    string        `json:"reason"`
	DecidedBy string        `json:"decided_by,omitempty" doc:"Who decided: user:<id>, api_key:<id>, timeout, or chat / trigger for an answer from a conversation."`
	// ExpiresAt and OnTimeout come from config.approval.timeout_seconds and on_timeout.
	ExpiresAt   *Time  `json:"expires_at,omitempty" doc:"When config.approval.timeout_seconds decides it, if set."`
	OnTimeout   string `json:"on_timeout,omitempty" enum:"reject,approve" doc:"What the timeout decides."`
	RequestedAt Time   `json:"requested_at"`
	DecidedAt   *Time  `json:"decided_at"`
}

// PendingCall is a tool call an approval holds back, and what the reviewer decided for it.
type PendingCall struct {
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// InputSchema is the tool's input schema, which edited arguments must satisfy.
	InputSchema json.RawMessage `json:"input_schema,omitempty" doc:"The tool's input schema: edited arguments must satisfy it."`
	Decision    string          `json:"decision,omitempty" enum:"approve,reject,edit" doc:"Once decided: approve, reject or edit."`
	Message     string          `json:"message,omitempty" doc:"Why a rejected call was rejected; the model reads it as the call's result."`
	// EditedArguments are what the call ran with instead of Arguments (decision edit).
	EditedArguments json.RawMessage `json:"edited_arguments,omitempty" doc:"The arguments the call ran with instead (decision edit)."`
}

// CallDecisions are the values of a pending call's decision.
var CallDecisions = []string{"approve", "reject", "edit"}

// ApprovalDecision is how a pending approval is closed.
type ApprovalDecision struct {
	Status    string        // approved, denied or cancelled
	Comment   string        // approved
	Reason    string        // denied
	DecidedBy string        // user:<id>, api_key:<id>, timeout …
	Calls     []PendingCall // the calls with their decisions; nil keeps them as they were
	Answer    string        // a question's answer
}

// ApprovalCreate records a pending approval.
func (s *Store) ApprovalCreate(ctx context.Context, a *Approval) error {
	if a.ID == "" {
		a.ID = NewID()
	}
	if a.Kind == "" {
		a.Kind = ApprovalCheckpoint
	}
	if a.Calls == nil {
		a.Calls = []PendingCall{}
	}
	a.Status, a.RequestedAt = "pending", Now()
	calls, _ := json.Marshal(a.Calls)
	choices, _ := json.Marshal(nonNil(a.Choices))
	var expires Time
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

func scanApproval(row interface{ Scan(...any) error }) (*Approval, error) {
	var a Approval
	var awaiting, calls, choices string
	var decided, expires Time
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
		a.Calls = []PendingCall{}
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
func (s *Store) ApprovalList(ctx context.Context, ws, status, executionID string, p Page) ([]*Approval, int, error) {
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

// ApprovalPending returns the pending approval of an execution, or nil, nil when it has none.
func (s *Store) ApprovalPending(ctx context.Context, ws, executionID string) (*Approval, error) {
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
func (s *Store) ApprovalsExpired(ctx context.Context, now Time, limit int) ([]*Approval, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+approvalColumns+approvalFrom+
		" WHERE p.status = 'pending' AND p.expires_at IS NOT NULL AND p.expires_at <= $1 ORDER BY p.expires_at, p.id LIMIT $2", now, limit)
	if err != nil {
		return nil, fmt.Errorf("list expired approvals: %w", err)
	}
	return collect(rows, scanApproval)
}

// ApprovalDecide closes the pending approval of an execution with a decision (approved,
// denied or cancelled); it returns nil, nil when none was pending.
func (s *Store) ApprovalDecide(ctx context.Context, ws, executionID string, d ApprovalDecision) (*Approval, error) {
	calls := ""
	if d.Calls != nil {
		raw, _ := json.Marshal(d.Calls)
		calls = string(raw)
	}
	var id string
	err := s.w.QueryRowContext(ctx, `UPDATE approvals SET status = $1, comment = $2, reason = $3, decided_at = $4, decided_by = $5, answer = $6,
		calls = CASE WHEN $7 = '' THEN calls ELSE $7 END
		WHERE workspace_id = $8 AND execution_id = $9 AND status = 'pending' RETURNING id`,
		d.Status, d.Comment, d.Reason, Now(), d.DecidedBy, d.Answer, calls, ws, executionID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("decide approval of %s: %w", executionID, err)
	}
	return s.ApprovalGet(ctx, ws, id)
}
