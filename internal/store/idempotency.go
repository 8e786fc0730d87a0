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

// IdempotencyUsedError says that an Idempotency-Key already names an earlier request (within
// IdempotencyTTL); Record is that request's record.
type IdempotencyUsedError struct {
	Key    string
	Record *domain.IdempotencyRecord
}

func (e *IdempotencyUsedError) Error() string {
	return fmt.Sprintf("Idempotency-Key %q was already used", e.Key)
}

// IdempotencyBegin claims key for a request. It returns the claim when this request is to be
// handled (a new key, or one whose earlier request's lease ran out: see TakenOver), else the
// record of the earlier request: finished (replay it), in progress (409), or with another
// hash. The caller renews the claim while it works (IdempotencyRenew), then calls
// IdempotencyFinish or IdempotencyRelease.
func (s *Store) IdempotencyBegin(ctx context.Context, ws, key, hash string, lease time.Duration) (*domain.IdempotencyClaim, *domain.IdempotencyRecord, error) {
	c := &domain.IdempotencyClaim{Workspace: ws, Key: key, Token: NewID()}
	// A record can vanish between the claim's insert and its read (its request failed and
	// released it): then the key is free, and the next round claims it.
	for range 5 {
		var prev *domain.IdempotencyRecord
		claimed := false
		err := s.InTx(ctx, func(tx *Store) error {
			var err error
			claimed, prev, err = tx.idempotencyClaim(ctx, c, hash, 0, "", lease)
			return err
		})
		switch {
		case err != nil:
			return nil, nil, err
		case claimed:
			return c, nil, nil
		case prev != nil:
			return nil, prev, nil
		}
	}
	// Requests with this key keep failing and releasing it: report the race as what it is.
	return nil, nil, &ConflictError{Message: fmt.Sprintf("requests with Idempotency-Key %q are being handled and released concurrently; retry", key)}
}

// ChatTurnClaim records that key started the chat turn ref; call it in the transaction that
// creates the turn, so the turn and its key are committed together and two concurrent
// retries cannot both start a turn. A key already used makes it record nothing and return
// an *IdempotencyUsedError with the earlier record.
func (s *Store) ChatTurnClaim(ctx context.Context, ws, key, hash string, ref domain.ChatTurnRef) error {
	raw, err := json.Marshal(ref)
	if err != nil {
		return err
	}
	c := &domain.IdempotencyClaim{Workspace: ws, Key: key, Token: NewID()}
	claimed, prev, err := s.idempotencyClaim(ctx, c, hash, domain.IdempotencyChatTurn, string(raw), 0)
	if err != nil {
		return err
	}
	if !claimed {
		if prev == nil {
			// Released between the insert and the read by a request of another route: this
			// is a race a retry wins, never a 500.
			return &ConflictError{Message: fmt.Sprintf("a request with Idempotency-Key %q was just handled; retry", key)}
		}
		return &IdempotencyUsedError{Key: key, Record: prev}
	}
	return nil
}

// IdempotencyGet returns the live record of key, or nil when there is none (or it expired).
func (s *Store) IdempotencyGet(ctx context.Context, ws, key string) (*domain.IdempotencyRecord, error) {
	r, created, err := scanIdempotency(s.r.QueryRowContext(ctx, "SELECT "+idempotencyCols+" FROM idempotency_keys WHERE workspace_id = $1 AND key = $2", ws, key))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read idempotency key: %w", err)
	case time.Since(created.Time) >= domain.IdempotencyTTL:
		return nil, nil
	}
	return r, nil
}

const idempotencyCols = "request_hash, status, response, execution_id, locked_until, created_at"

func scanIdempotency(row *sql.Row) (*domain.IdempotencyRecord, domain.Time, error) {
	var r domain.IdempotencyRecord
	var exec sql.NullString
	var until int64
	var created domain.Time
	if err := row.Scan(&r.RequestHash, &r.Status, &r.Response, &exec, &until, &created); err != nil {
		return nil, domain.Time{}, err
	}
	r.ExecutionID, r.LockedUntil = exec.String, domain.TimeFromMillis(until)
	return &r, created, nil
}

// idempotencyClaim inserts key's record for c unless a live one exists; an expired record
// is replaced, and an in-progress one of the same request whose lease ran out (lease > 0
// only: chat turns are recorded done) is taken over. When it claims nothing it returns the
// record found (nil if it vanished meanwhile). It must run in a transaction: on PostgreSQL
// a concurrent claim of the same key waits for this one's transaction and then finds its
// record, and a concurrent take-over finds the lease renewed.
func (s *Store) idempotencyClaim(ctx context.Context, c *domain.IdempotencyClaim, hash string, status int, response string, lease time.Duration) (bool, *domain.IdempotencyRecord, error) {
	now := domain.Now()
	until := domain.Time{Time: now.Add(lease)}
	cutoff := domain.Time{Time: now.Add(-domain.IdempotencyTTL)}
	if _, err := s.exec(ctx, "DELETE FROM idempotency_keys WHERE workspace_id = $1 AND key = $2 AND created_at <= $3", c.Workspace, c.Key, cutoff); err != nil {
		return false, nil, fmt.Errorf("expire idempotency key: %w", err)
	}
	res, err := s.exec(ctx, `INSERT INTO idempotency_keys (workspace_id, key, request_hash, status, response, created_at, locked_until, lock_token)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (workspace_id, key) DO NOTHING`,
		c.Workspace, c.Key, hash, status, response, now, until.UnixMilli(), c.Token)
	if err != nil {
		return false, nil, fmt.Errorf("claim idempotency key: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return true, nil, nil
	}
	if lease > 0 {
		// The earlier request's process stopped renewing: take its key over, keeping what it
		// had done (the execution it created).
		var exec sql.NullString
		err := s.w.QueryRowContext(ctx, `UPDATE idempotency_keys SET locked_until = $1, lock_token = $2
			WHERE workspace_id = $3 AND key = $4 AND status = 0 AND request_hash = $5 AND locked_until <= $6 RETURNING execution_id`,
			until.UnixMilli(), c.Token, c.Workspace, c.Key, hash, now.UnixMilli()).Scan(&exec)
		switch {
		case err == nil:
			c.TakenOver, c.ExecutionID = true, exec.String
			return true, nil, nil
		case !errors.Is(err, sql.ErrNoRows):
			return false, nil, fmt.Errorf("take over idempotency key: %w", err)
		}
	}
	r, _, err := scanIdempotency(s.w.QueryRowContext(ctx, "SELECT "+idempotencyCols+" FROM idempotency_keys WHERE workspace_id = $1 AND key = $2",
		c.Workspace, c.Key))
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil, nil
	}
	if err != nil {
		return false, nil, fmt.Errorf("read idempotency key: %w", err)
	}
	return false, r, nil
}

// IdempotencyRenew extends the lease of c's request in progress; false means the claim was
// lost (a retry took the key over after the lease ran out).
func (s *Store) IdempotencyRenew(ctx context.Context, c *domain.IdempotencyClaim, lease time.Duration) (bool, error) {
	res, err := s.exec(ctx, "UPDATE idempotency_keys SET locked_until = $1 WHERE workspace_id = $2 AND key = $3 AND lock_token = $4 AND status = 0",
		domain.Now().Add(lease).UnixMilli(), c.Workspace, c.Key, c.Token)
	if err != nil {
		return false, fmt.Errorf("renew idempotency key: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// IdempotencyLinkExecution records the execution c's request creates; call it in the
// transaction that creates it, so a retry after a crash answers from that execution rather
// than start another. A claim lost to a retry is a *ConflictError, which rolls the creation
// back: a key never has two executions.
func (s *Store) IdempotencyLinkExecution(ctx context.Context, c *domain.IdempotencyClaim, executionID string) error {
	res, err := s.exec(ctx, "UPDATE idempotency_keys SET execution_id = $1 WHERE workspace_id = $2 AND key = $3 AND lock_token = $4 AND status = 0",
		executionID, c.Workspace, c.Key, c.Token)
	if err != nil {
		return fmt.Errorf("link idempotency key: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return &ConflictError{Message: fmt.Sprintf("the request with Idempotency-Key %q was taken over by a retry after its lease ran out", c.Key)}
	}
	return nil
}

// IdempotencyFinish stores the response to replay for c's key; false means the claim was
// lost to a retry and nothing was stored.
func (s *Store) IdempotencyFinish(ctx context.Context, c *domain.IdempotencyClaim, status int, response string) (bool, error) {
	res, err := s.exec(ctx, "UPDATE idempotency_keys SET status = $1, response = $2 WHERE workspace_id = $3 AND key = $4 AND lock_token = $5 AND status = 0",
		status, response, c.Workspace, c.Key, c.Token)
	if err != nil {
		return false, fmt.Errorf("record idempotent response: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// IdempotencyRelease forgets c's key, so a corrected retry is handled afresh (a claim lost
// to a retry releases nothing). A key whose request created an execution is kept, with its
// lease ended: a retry answers from that execution at once instead of starting another.
func (s *Store) IdempotencyRelease(ctx context.Context, c *domain.IdempotencyClaim) error {
	return s.InTx(ctx, func(tx *Store) error {
		_, err := tx.exec(ctx, "DELETE FROM idempotency_keys WHERE workspace_id = $1 AND key = $2 AND lock_token = $3 AND status = 0 AND execution_id IS NULL",
			c.Workspace, c.Key, c.Token)
		if err == nil {
			_, err = tx.exec(ctx, "UPDATE idempotency_keys SET locked_until = 0 WHERE workspace_id = $1 AND key = $2 AND lock_token = $3 AND status = 0",
				c.Workspace, c.Key, c.Token)
		}
		if err != nil {
			return fmt.Errorf("release idempotency key: %w", err)
		}
		return nil
	})
}
