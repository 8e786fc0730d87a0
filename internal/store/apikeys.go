package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentplane/agentplane/internal/domain"
)

const apiKeyColumns = `id, workspace_id, name, key_prefix, scopes, allowed_ips, allowed_origins, expires_at, last_used_at, created_at`

func scanAPIKey(row interface{ Scan(...any) error }) (*domain.APIKey, error) {
	var k domain.APIKey
	if err := row.Scan(&k.ID, &k.WorkspaceID, &k.Name, &k.KeyPrefix, &k.Scopes, &k.AllowedIPs, &k.AllowedOrigins,
		&k.ExpiresAt, &k.LastUsedAt, &k.CreatedAt); err != nil {
		return nil, err
	}
	for _, l := range []*domain.Strings{&k.Scopes, &k.AllowedIPs, &k.AllowedOrigins} {
		if *l == nil {
			*l = domain.Strings{}
		}
	}
	return &k, nil
}

// APIKeyCreate inserts a key with the SHA-256 hash of its raw form; a preset ID is kept.
func (s *Store) APIKeyCreate(ctx context.Context, k *domain.APIKey, hash string) (*domain.APIKey, error) {
	if k.ID == "" {
		k.ID = NewID()
	}
	_, err := s.exec(ctx, `INSERT INTO api_keys (id, workspace_id, name, key_prefix, key_hash, scopes, allowed_ips, allowed_origins,
		expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		k.ID, k.WorkspaceID, k.Name, k.KeyPrefix, hash, k.Scopes, k.AllowedIPs, k.AllowedOrigins, k.ExpiresAt, domain.Now())
	if err != nil {
		if isUniqueViolation(err) {
			return nil, &ConflictError{Message: fmt.Sprintf("api key %s already exists", k.ID)}
		}
		return nil, fmt.Errorf("insert api key: %w", err)
	}
	return s.APIKeyGet(ctx, k.WorkspaceID, k.ID)
}

// APIKeyList returns one page of a workspace's keys that are not revoked, newest first.
func (s *Store) APIKeyList(ctx context.Context, ws string, p domain.Page) ([]*domain.APIKey, int, error) {
	where := " WHERE workspace_id = $1 AND revoked_at IS NULL"
	return listPage(ctx, s, "api_keys", apiKeyColumns, where, []any{ws}, "", p, scanAPIKey)
}

// APIKeyGet returns one key of the workspace; a revoked key is not found.
func (s *Store) APIKeyGet(ctx context.Context, ws, id string) (*domain.APIKey, error) {
	k, err := scanAPIKey(s.r.QueryRowContext(ctx, "SELECT "+apiKeyColumns+
		" FROM api_keys WHERE workspace_id = $1 AND id = $2 AND revoked_at IS NULL", ws, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("api key", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get api key %s: %w", id, err)
	}
	return k, nil
}

// APIKeyByHash returns the key, of any workspace, whose raw form hashes to hash; revoked keys
// and the keys of a deleted workspace are not found.
func (s *Store) APIKeyByHash(ctx context.Context, hash string) (*domain.APIKey, error) {
	k, err := scanAPIKey(s.r.QueryRowContext(ctx, "SELECT "+apiKeyColumns+
		" FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL"+
		" AND NOT EXISTS (SELECT 1 FROM workspaces w WHERE w.id = api_keys.workspace_id AND w.deleted_at IS NOT NULL)", hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("api key", "")
	}
	if err != nil {
		return nil, fmt.Errorf("get api key by hash: %w", err)
	}
	return k, nil
}

// APIKeyRevoke marks a key revoked, so it stops working, and returns it as it was.
func (s *Store) APIKeyRevoke(ctx context.Context, ws, id string) (*domain.APIKey, error) {
	var k *domain.APIKey
	err := s.InTx(ctx, func(tx *Store) error {
		var err error
		if k, err = tx.APIKeyGet(ctx, ws, id); err != nil {
			return err
		}
		_, err = tx.exec(ctx, "UPDATE api_keys SET revoked_at = $1 WHERE workspace_id = $2 AND id = $3", domain.Now(), ws, id)
		if err != nil {
			return fmt.Errorf("revoke api key %s: %w", id, err)
		}
		return nil
	})
	return k, err
}

// APIKeyRotate gives a key a new raw form (its prefix and hash); the old one stops working.
func (s *Store) APIKeyRotate(ctx context.Context, ws, id, newPrefix, newHash string) (*domain.APIKey, error) {
	var k *domain.APIKey
	err := s.InTx(ctx, func(tx *Store) error {
		res, err := tx.exec(ctx, "UPDATE api_keys SET key_prefix = $1, key_hash = $2 WHERE workspace_id = $3 AND id = $4 AND revoked_at IS NULL",
			newPrefix, newHash, ws, id)
		if err != nil {
			return fmt.Errorf("rotate api key %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("api key", id)
		}
		k, err = tx.APIKeyGet(ctx, ws, id)
		return err
	})
	return k, err
}

// APIKeyTouch records that a key was used at the given time.
func (s *Store) APIKeyTouch(ctx context.Context, id string, at domain.Time) error {
	if _, err := s.exec(ctx, "UPDATE api_keys SET last_used_at = $1 WHERE id = $2", at, id); err != nil {
		return fmt.Errorf("touch api key %s: %w", id, err)
	}
	return nil
}

// APIKeyCount counts every key of every workspace, revoked ones included; `serve` creates a
// bootstrap key only when there has never been one.
func (s *Store) APIKeyCount(ctx context.Context) (int, error) {
	return s.count(ctx, "SELECT count(*) FROM api_keys", nil)
}
