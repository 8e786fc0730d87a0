package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentplane/agentplane/internal/domain"
)

const workspaceColumns = "id, name, slug, retention_days, deleted_at, created_at, updated_at"

func scanWorkspace(row interface{ Scan(...any) error }) (*domain.Workspace, error) {
	var w domain.Workspace
	if err := row.Scan(&w.ID, &w.Name, &w.Slug, &w.RetentionDays, &w.DeletedAt, &w.CreatedAt, &w.UpdatedAt); err != nil {
		return nil, err
	}
	return &w, nil
}

// WorkspaceCreate inserts a workspace; a taken slug is a conflict.
func (s *Store) WorkspaceCreate(ctx context.Context, w *domain.Workspace) (*domain.Workspace, error) {
	if w.ID == "" {
		w.ID = NewID()
	}
	now := domain.Now()
	// retention_days is written only when set (the column defaults to 0), so that a database
	// migrated down below 00019 (the migration tests) still takes workspaces.
	q, args := "INSERT INTO workspaces (id, name, slug, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)", []any{w.ID, w.Name, w.Slug, now}
	if w.RetentionDays != 0 {
		q = "INSERT INTO workspaces (id, name, slug, created_at, updated_at, retention_days) VALUES ($1, $2, $3, $4, $4, $5)"
		args = append(args, w.RetentionDays)
	}
	_, err := s.exec(ctx, q, args...)
	if isUniqueViolation(err) {
		return nil, &ConflictError{Message: fmt.Sprintf("workspace slug %q is taken", w.Slug)}
	}
	if err != nil {
		return nil, fmt.Errorf("insert workspace: %w", err)
	}
	w.CreatedAt, w.UpdatedAt = now, now
	return w, nil
}

// WorkspaceGet returns one workspace; a deleted one is not found.
func (s *Store) WorkspaceGet(ctx context.Context, id string) (*domain.Workspace, error) {
	return s.workspaceGet(ctx, s.r, id, " AND deleted_at IS NULL")
}

func (s *Store) workspaceGet(ctx context.Context, q dbtx, id, and string) (*domain.Workspace, error) {
	w, err := scanWorkspace(q.QueryRowContext(ctx, "SELECT "+workspaceColumns+" FROM workspaces WHERE id = $1"+and, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("workspace", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get workspace %s: %w", id, err)
	}
	return w, nil
}

// WorkspaceEnsure returns the workspace with the given id, creating it when it is missing. A
// deleted workspace whose rows are not purged yet is returned as it is (deleted): it comes
// back, empty, once the purge has removed it.
func (s *Store) WorkspaceEnsure(ctx context.Context, w *domain.Workspace) (*domain.Workspace, error) {
	got, err := s.workspaceGet(ctx, s.r, w.ID, "")
	if IsNotFound(err) {
		return s.WorkspaceCreate(ctx, w)
	}
	return got, err
}

// WorkspaceUpdate sets a workspace's retention (nil leaves it) and returns the workspace.
func (s *Store) WorkspaceUpdate(ctx context.Context, id string, retentionDays *int) (*domain.Workspace, error) {
	var w *domain.Workspace
	err := s.InTx(ctx, func(tx *Store) error {
		res, err := tx.exec(ctx, `UPDATE workspaces SET retention_days = COALESCE($1, retention_days), updated_at = $2
			WHERE id = $3 AND deleted_at IS NULL`, retentionDays, domain.Now(), id)
		if err != nil {
			return fmt.Errorf("update workspace %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("workspace", id)
		}
		w, err = tx.workspaceGet(ctx, tx.w, id, "")
		return err
	})
	return w, err
}

// WorkspaceDelete marks a workspace deleted and returns it: from the commit on it answers
// nothing (WorkspaceGet, memberships and its API keys do not find it) and the purge deletes
// its rows. Its triggers go at once, so no hook or schedule starts a run in it any more.
func (s *Store) WorkspaceDelete(ctx context.Context, id string) (*domain.Workspace, error) {
	var w *domain.Workspace
	err := s.InTx(ctx, func(tx *Store) error {
		now := domain.Now()
		res, err := tx.exec(ctx, "UPDATE workspaces SET deleted_at = $1, updated_at = $1 WHERE id = $2 AND deleted_at IS NULL", now, id)
		if err != nil {
			return fmt.Errorf("delete workspace %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("workspace", id)
		}
		if _, err := tx.exec(ctx, "DELETE FROM agent_triggers WHERE workspace_id = $1", id); err != nil {
			return fmt.Errorf("delete triggers of workspace %s: %w", id, err)
		}
		w, err = tx.workspaceGet(ctx, tx.w, id, "")
		return err
	})
	return w, err
}

// WorkspaceListDeleted returns the ids of up to limit deleted workspaces whose rows the purge
// has yet to remove, longest deleted first.
func (s *Store) WorkspaceListDeleted(ctx context.Context, limit int) ([]string, error) {
	return s.strings(ctx, fmt.Sprintf("SELECT id FROM workspaces WHERE deleted_at IS NOT NULL ORDER BY deleted_at, id LIMIT %d", max(limit, 1)))
}

// WorkspaceRetentionList returns the retention of every workspace that is not deleted.
func (s *Store) WorkspaceRetentionList(ctx context.Context) ([]domain.WorkspaceRetention, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT id, retention_days FROM workspaces WHERE deleted_at IS NULL ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("list workspace retention: %w", err)
	}
	defer rows.Close()
	var out []domain.WorkspaceRetention
	for rows.Next() {
		var r domain.WorkspaceRetention
		if err := rows.Scan(&r.ID, &r.Days); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// strings runs a query of one text column and returns its values.
func (s *Store) strings(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
