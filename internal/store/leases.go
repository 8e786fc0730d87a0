package store

import (
	"context"
	"fmt"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// nowMS is SQL for the database's clock in Unix milliseconds. Leases are set and compared on
// this one clock, so nodes whose clocks disagree still agree on which leases have expired.
func (s *Store) nowMS() string {
	if s.dialect == Postgres {
		return "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)"
	}
	return "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"
}

// ExecutionLeasesRenew extends the leases of every running execution node owns to lease from
// now, in one statement whatever their number, and returns them: a run of the node missing
// from the answer lost its lease (another node rescued it).
func (s *Store) ExecutionLeasesRenew(ctx context.Context, node string, lease time.Duration) ([]domain.LeaseRenewal, error) {
	rows, err := s.w.QueryContext(ctx, `UPDATE executions SET lease_expires_at = `+s.nowMS()+` + $1
		WHERE owner_node = $2 AND status = 'running' RETURNING id, attempt`, lease.Milliseconds(), node)
	if err != nil {
		return nil, fmt.Errorf("renew leases: %w", err)
	}
	defer rows.Close()
	var out []domain.LeaseRenewal
	for rows.Next() {
		var r domain.LeaseRenewal
		if err := rows.Scan(&r.ID, &r.Attempt); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// ExecutionMarkModelCalled records, just before a pass's first model call, that the pass
// reached one: from then on a rescue fails the run rather than queueing it again, so a model
// is never called twice for work whose output a client may have seen. It reports false when
// the pass no longer holds the row (cancelled, or rescued elsewhere): no call may start then.
func (s *Store) ExecutionMarkModelCalled(ctx context.Context, id string, o domain.Owner) (bool, error) {
	q := `UPDATE executions SET model_called = TRUE WHERE id = $1 AND owner_node = $2 AND attempt = $3 AND status = 'running'`
	if s.dialect == Postgres && !s.inTx {
		// The mark guards against a node's crash, which leaves PostgreSQL running: it is seen
		// by every node once committed, flushed or not. So its commit does not wait for the WAL
		// flush, about half of its cost (BenchmarkMarkModelCalled/postgres, one caller, a
		// loaded 2-core machine: 1.1-1.4 ms with the wait, 0.6 ms without). Only a crash of
		// the database server itself within the flush delay can lose it.
		q = `WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true))
			UPDATE executions SET model_called = TRUE FROM relaxed WHERE id = $1 AND owner_node = $2 AND attempt = $3 AND status = 'running'`
	}
	res, err := s.exec(ctx, q, id, o.Node, o.Attempt)
	if err != nil {
		return false, fmt.Errorf("mark model call of %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ExecutionReserveSeqs raises the highest frame id the pass may send to upTo, before frames
// above the old reservation are sent. It reports false when the pass no longer holds the row.
func (s *Store) ExecutionReserveSeqs(ctx context.Context, id string, o domain.Owner, upTo int) (bool, error) {
	res, err := s.exec(ctx, `UPDATE executions SET seq_reserved = $1 WHERE id = $2 AND owner_node = $3 AND attempt = $4 AND status = 'running'`,
		upTo, id, o.Node, o.Attempt)
	if err != nil {
		return false, fmt.Errorf("reserve frame ids of %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ExecutionRequeue puts a running execution whose pass never reached a model call back in the
// queue (pending, no owner), for another pass anywhere. seqUsed is the last frame id the pass
// stored; with o nil the row is taken whatever pass holds it (a rescue, inside the transaction
// that locked it). It reports false when the row was not requeued (it moved, or the pass had
// reached a model call). It is the lifecycle's MoveRequeue, which clients never make.
func (s *Store) ExecutionRequeue(ctx context.Context, ws, id string, o *domain.Owner, seqUsed *int) (bool, error) {
	q := `UPDATE executions SET status = 'pending', owner_node = NULL, lease_expires_at = NULL, model_called = FALSE, updated_at = $1`
	args := []any{domain.Now()}
	if seqUsed != nil {
		args = append(args, *seqUsed)
		q += fmt.Sprintf(", seq_reserved = $%d", len(args))
	}
	args = append(args, ws, id)
	q += fmt.Sprintf(" WHERE workspace_id = $%d AND id = $%d AND status = 'running' AND NOT model_called", len(args)-1, len(args))
	if o != nil {
		args = append(args, o.Node, o.Attempt)
		q += fmt.Sprintf(" AND owner_node = $%d AND attempt = $%d", len(args)-1, len(args))
	}
	res, err := s.exec(ctx, q, args...)
	if err != nil {
		return false, fmt.Errorf("requeue execution %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ExecutionsExpired returns up to limit running executions whose lease has expired (or that
// never had one: runs of versions before leases), oldest first. On PostgreSQL the rows stay
// locked until the caller's transaction ends, and rows another rescuer holds are skipped.
func (s *Store) ExecutionsExpired(ctx context.Context, limit int) ([]*domain.Execution, error) {
	q := "SELECT " + executionColumns + ` FROM executions WHERE status = 'running'
		AND (lease_expires_at IS NULL OR lease_expires_at < ` + s.nowMS() + `) ORDER BY created_at, id LIMIT $1`
	if s.dialect == Postgres {
		q += " FOR UPDATE SKIP LOCKED"
	}
	rows, err := s.w.QueryContext(ctx, q, limit)
	if err != nil {
		return nil, fmt.Errorf("list expired leases: %w", err)
	}
	return collect(rows, scanExecution)
}

// ChatSessionUnlockFor releases the session an execution holds, whichever it is (a rescue
// does not know the session of a run that did not record one).
func (s *Store) ChatSessionUnlockFor(ctx context.Context, ws, executionID string) error {
	_, err := s.exec(ctx, "UPDATE chat_sessions SET active_execution_id = NULL WHERE workspace_id = $1 AND active_execution_id = $2", ws, executionID)
	if err != nil {
		return fmt.Errorf("release chat session of %s: %w", executionID, err)
	}
	return nil
}

// NotifyChannel is the PostgreSQL LISTEN/NOTIFY channel of this database and schema: nodes
// on other schemas of the same database (tests, staging beside production) never hear each
// other. "" on SQLite, which has one node.
func (s *Store) NotifyChannel(ctx context.Context) (string, error) {
	if s.dialect != Postgres {
		return "", nil
	}
	var schema string
	if err := s.db.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return "", fmt.Errorf("read current schema: %w", err)
	}
	return domain.ChannelFor(schema), nil
}

// Notify sends payload to every node listening on channel (PostgreSQL pg_notify; payloads
// must stay under 8000 bytes). It does nothing on SQLite.
func (s *Store) Notify(ctx context.Context, channel, payload string) error {
	if s.dialect != Postgres {
		return nil
	}
	if _, err := s.db.ExecContext(ctx, "SELECT pg_notify($1, $2)", channel, payload); err != nil {
		return fmt.Errorf("notify %s: %w", channel, err)
	}
	return nil
}
