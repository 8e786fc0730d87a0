package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Workspace is a tenant: every other resource belongs to exactly one.
type Workspace struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Slug      string `json:"slug"`
	CreatedAt Time   `json:"created_at"`
	UpdatedAt Time   `json:"updated_at"`
}

// WorkspaceCreate inserts a workspace; a taken slug is a conflict.
func (s *Store) WorkspaceCreate(ctx context.Context, w *Workspace) (*Workspace, error) {
	if w.ID == "" {
		w.ID = NewID()
	}
	now := Now()
	_, err := s.exec(ctx, "INSERT INTO workspaces (id, name, slug, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)",
		w.ID, w.Name, w.Slug, now)
	if isUniqueViolation(err) {
		return nil, &ConflictError{Message: fmt.Sprintf("workspace slug %q is taken", w.Slug)}
	}
	if err != nil {
		return nil, fmt.Errorf("insert workspace: %w", err)
	}
	w.CreatedAt, w.UpdatedAt = now, now
	return w, nil
}

// WorkspaceGet returns one workspace.
func (s *Store) WorkspaceGet(ctx context.Context, id string) (*Workspace, error) {
	var w Workspace
	err := s.r.QueryRowContext(ctx, "SELECT id, name, slug, created_at, updated_at FROM workspaces WHERE id = $1", id).
		Scan(&w.ID, &w.Name, &w.Slug, &w.CreatedAt, &w.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("workspace", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get workspace %s: %w", id, err)
	}
	return &w, nil
}

// WorkspaceEnsure returns the workspace with the given id, creating it when it is missing.
func (s *Store) WorkspaceEnsure(ctx context.Context, w *Workspace) (*Workspace, error) {
	got, err := s.WorkspaceGet(ctx, w.ID)
	if IsNotFound(err) {
		return s.WorkspaceCreate(ctx, w)
	}
	return got, err
}
