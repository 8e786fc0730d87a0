package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// IdempotencyTTL is how long a stored response answers a repeated Idempotency-Key.
const IdempotencyTTL = 24 * time.Hour

// IdempotencyRecord is the first response to a request made with an Idempotency-Key. Status 0
// means that request is still being handled.
type IdempotencyRecord struct {
	RequestHash string
	Status      int
	Response    string
}

// IdempotencyBegin claims key for a request. It returns nil when the claim is new (the caller
// handles the request, then calls IdempotencyFinish or IdempotencyRelease), or the record of
// the earlier request with that key.
func (s *Store) IdempotencyBegin(ctx context.Context, ws, key, hash string) (*IdempotencyRecord, error) {
	var rec *IdempotencyRecord
	err := s.InTx(ctx, func(tx *Store) error {
		var r IdempotencyRecord
		var created Time
		err := tx.w.QueryRowContext(ctx, "SELECT request_hash, status, response, created_at FROM idempotency_keys WHERE workspace_id = $1 AND key = $2",
			ws, key).Scan(&r.RequestHash, &r.Status, &r.Response, &created)
		switch {
		case err == nil && time.Since(created.Time) < IdempotencyTTL:
			rec = &r
			return nil
		case err == nil:
			if _, err := tx.exec(ctx, "DELETE FROM idempotency_keys WHERE workspace_id = $1 AND key = $2", ws, key); err != nil {
				return err
			}
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("read idempotency key: %w", err)
		}
		_, err = tx.exec(ctx, "INSERT INTO idempotency_keys (workspace_id, key, request_hash, created_at) VALUES ($1, $2, $3, $4)",
			ws, key, hash, Now())
		return err
	})
	return rec, err
}

// IdempotencyFinish stores the response to replay for key.
func (s *Store) IdempotencyFinish(ctx context.Context, ws, key string, status int, response string) error {
	_, err := s.exec(ctx, "UPDATE idempotency_keys SET status = $1, response = $2 WHERE workspace_id = $3 AND key = $4",
		status, response, ws, key)
	return err
}

// IdempotencyRelease forgets key, so a corrected retry is handled afresh.
func (s *Store) IdempotencyRelease(ctx context.Context, ws, key string) error {
	_, err := s.exec(ctx, "DELETE FROM idempotency_keys WHERE workspace_id = $1 AND key = $2", ws, key)
	return err
}
