package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// TriggerReplyCreate records the reply an execution owes; run it in the transaction that
// creates the execution, so no run is ever without its reply.
func (s *Store) TriggerReplyCreate(ctx context.Context, r *domain.TriggerReply) error {
	to, err := json.Marshal(r.ReplyTo)
	if err != nil {
		return err
	}
	now := domain.Now()
	if _, err := s.exec(ctx, `INSERT INTO trigger_replies (execution_id, workspace_id, trigger_id, reply_to, status, created_at, updated_at)
		VALUES ($1, $2, $3, $4, 'pending', $5, $5)`, r.ExecutionID, r.WorkspaceID, r.TriggerID, string(to), now); err != nil {
		return fmt.Errorf("record reply of execution %s: %w", r.ExecutionID, err)
	}
	return nil
}

// TriggerReplyReopen makes the reply of an execution pending again, to replyTo: a run that
// asked a question in a thread (its reply was the question) resumed with the answer, and its
// next reply goes to the message that answered.
func (s *Store) TriggerReplyReopen(ctx context.Context, executionID string, replyTo map[string]string) error {
	to, err := json.Marshal(replyTo)
	if err != nil {
		return err
	}
	_, err = s.exec(ctx, `UPDATE trigger_replies SET status = 'pending', reply_to = $1, attempts = 0, last_error = '', locked_until = NULL, updated_at = $2
		WHERE execution_id = $3`, string(to), domain.Now(), executionID)
	if err != nil {
		return fmt.Errorf("reopen trigger reply of %s: %w", executionID, err)
	}
	return nil
}

// TriggerReplyClaim takes the pending reply of an execution for lease (one attempt), unless
// another sender holds it; (nil, nil) when there is nothing to send.
func (s *Store) TriggerReplyClaim(ctx context.Context, executionID string, now time.Time, lease time.Duration) (*domain.TriggerReply, error) {
	var r domain.TriggerReply
	var to string
	err := s.w.QueryRowContext(ctx, `UPDATE trigger_replies SET locked_until = $1, attempts = attempts + 1, updated_at = $2
		WHERE execution_id = $3 AND status = 'pending' AND (locked_until IS NULL OR locked_until <= $2)
		RETURNING execution_id, workspace_id, trigger_id, reply_to, status, attempts, last_error`,
		now.Add(lease).UnixMilli(), now.UnixMilli(), executionID).Scan(&r.ExecutionID, &r.WorkspaceID, &r.TriggerID, &to, &r.Status, &r.Attempts, &r.LastError)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("claim reply of execution %s: %w", executionID, err)
	}
	if err := json.Unmarshal([]byte(to), &r.ReplyTo); err != nil {
		return nil, fmt.Errorf("decode reply of execution %s: %w", executionID, err)
	}
	return &r, nil
}

// TriggerReplyFinish records the outcome of an attempt: status sent or failed, or pending
// again with the next attempt not before retryAt.
func (s *Store) TriggerReplyFinish(ctx context.Context, executionID, status, lastError string, retryAt time.Time) error {
	var locked any
	if status == domain.ReplyPending {
		locked = retryAt.UnixMilli()
	}
	_, err := s.exec(ctx, "UPDATE trigger_replies SET status = $1, last_error = $2, locked_until = $3, updated_at = $4 WHERE execution_id = $5",
		status, lastError, locked, domain.Now(), executionID)
	if err != nil {
		return fmt.Errorf("record reply of execution %s: %w", executionID, err)
	}
	return nil
}

// TriggerReplyGet returns the reply an execution owes (tests and diagnostics).
func (s *Store) TriggerReplyGet(ctx context.Context, executionID string) (*domain.TriggerReply, error) {
	var r domain.TriggerReply
	var to string
	err := s.r.QueryRowContext(ctx, `SELECT execution_id, workspace_id, trigger_id, reply_to, status, attempts, last_error
		FROM trigger_replies WHERE execution_id = $1`, executionID).Scan(&r.ExecutionID, &r.WorkspaceID, &r.TriggerID, &to, &r.Status, &r.Attempts, &r.LastError)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("trigger reply", executionID)
	}
	if err != nil {
		return nil, err
	}
	_ = json.Unmarshal([]byte(to), &r.ReplyTo)
	return &r, nil
}

// TriggerRepliesDue lists the executions whose pending, unlocked replies can be sent: their
// run stopped (ended, or waits for approval). Oldest first, up to limit.
func (s *Store) TriggerRepliesDue(ctx context.Context, now time.Time, limit int) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT r.execution_id FROM trigger_replies r JOIN executions x ON x.id = r.execution_id
		WHERE r.status = 'pending' AND (r.locked_until IS NULL OR r.locked_until <= $1)
		AND x.status IN ('completed', 'failed', 'cancelled', 'rejected', 'awaiting_approval')
		ORDER BY r.created_at`+fmt.Sprintf(" LIMIT %d", max(limit, 1)), now.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("find due replies: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// TriggerRepliesPrune deletes the records of replies sent or given up more than
// TriggerReplyRetention ago; it returns how many went.
func (s *Store) TriggerRepliesPrune(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.exec(ctx, "DELETE FROM trigger_replies WHERE status <> 'pending' AND updated_at < $1", now.Add(-domain.TriggerReplyRetention).UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("prune trigger replies: %w", err)
	}
	return res.RowsAffected()
}
