package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
)

// UserCreate inserts a user; the email is stored lower-cased and a taken email is a conflict.
func (s *Store) UserCreate(ctx context.Context, u *domain.User) (*domain.User, error) {
	if u.ID == "" {
		u.ID = NewID()
	}
	u.Email = strings.ToLower(strings.TrimSpace(u.Email))
	u.CreatedAt = domain.Now()
	_, err := s.exec(ctx, "INSERT INTO users (id, email, password_hash, created_at) VALUES ($1, $2, $3, $4)",
		u.ID, u.Email, u.PasswordHash, u.CreatedAt)
	if isUniqueViolation(err) {
		return nil, &ConflictError{Message: fmt.Sprintf("a user with email %q exists already", u.Email)}
	}
	if err != nil {
		return nil, fmt.Errorf("insert user: %w", err)
	}
	return u, nil
}

// UserByEmail returns the user with the email, compared case-insensitively.
func (s *Store) UserByEmail(ctx context.Context, email string) (*domain.User, error) {
	var u domain.User
	email = strings.ToLower(strings.TrimSpace(email))
	err := s.r.QueryRowContext(ctx, "SELECT id, email, password_hash, created_at FROM users WHERE email = $1", email).
		Scan(&u.ID, &u.Email, &u.PasswordHash, &u.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("user", email)
	}
	if err != nil {
		return nil, fmt.Errorf("get user by email: %w", err)
	}
	return &u, nil
}

// MembershipAdd makes the user a member of the workspace with the role, or changes the role
// of an existing member.
func (s *Store) MembershipAdd(ctx context.Context, ws, userID, role string) error {
	if !domain.ValidRole(role) {
		return &ValidationError{Field: "role", Message: fmt.Sprintf("must be owner, admin or member, got %q", role)}
	}
	_, err := s.exec(ctx, `INSERT INTO memberships (workspace_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = excluded.role`, ws, userID, role, domain.Now())
	if err != nil {
		return fmt.Errorf("add member %s to workspace %s: %w", userID, ws, err)
	}
	return nil
}

// MembershipRole returns the user's role in the workspace; not a member (or no such
// workspace) is not found.
func (s *Store) MembershipRole(ctx context.Context, ws, userID string) (string, error) {
	var role string
	err := s.r.QueryRowContext(ctx, `SELECT m.role FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
		WHERE m.workspace_id = $1 AND m.user_id = $2 AND w.deleted_at IS NULL`, ws, userID).Scan(&role)
	if errors.Is(err, sql.ErrNoRows) {
		return "", notFound("membership", ws)
	}
	if err != nil {
		return "", fmt.Errorf("get membership of %s in %s: %w", userID, ws, err)
	}
	return role, nil
}

// MembershipFind returns the workspace a user means by ws (its id or its slug) and their
// role there; not a member (or no such workspace) is not found.
func (s *Store) MembershipFind(ctx context.Context, ws, userID string) (workspaceID, role string, err error) {
	err = s.r.QueryRowContext(ctx, `SELECT m.workspace_id, m.role FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
		WHERE m.user_id = $1 AND (w.id = $2 OR w.slug = $2) AND w.deleted_at IS NULL ORDER BY (w.id = $2) DESC LIMIT 1`, userID, ws).Scan(&workspaceID, &role)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", notFound("membership", ws)
	}
	if err != nil {
		return "", "", fmt.Errorf("get membership of %s in %s: %w", userID, ws, err)
	}
	return workspaceID, role, nil
}

// MembershipList returns every workspace the user is a member of, oldest membership first.
func (s *Store) MembershipList(ctx context.Context, userID string) ([]*domain.Membership, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT w.id, w.slug, w.name, m.role FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
		WHERE m.user_id = $1 AND w.deleted_at IS NULL ORDER BY m.created_at, w.id`, userID)
	if err != nil {
		return nil, fmt.Errorf("list memberships of %s: %w", userID, err)
	}
	return collect(rows, func(row interface{ Scan(...any) error }) (*domain.Membership, error) {
		var m domain.Membership
		return &m, row.Scan(&m.ID, &m.Slug, &m.Name, &m.Role)
	})
}

// WorkspaceList returns one page of the workspaces the user is a member of, newest first;
// an empty userID lists every workspace.
func (s *Store) WorkspaceList(ctx context.Context, userID string, p domain.Page) ([]*domain.Workspace, int, error) {
	from, args := " FROM workspaces w WHERE w.deleted_at IS NULL", []any{}
	if userID != "" {
		from = " FROM workspaces w JOIN memberships m ON m.workspace_id = w.id WHERE m.user_id = $1 AND w.deleted_at IS NULL"
		args = append(args, userID)
	}
	page, pargs := pageClause("w", p, args)
	rows, err := s.r.QueryContext(ctx, "SELECT w.id, w.name, w.slug, w.retention_days, w.deleted_at, w.created_at, w.updated_at"+from+page, pargs...)
	if err != nil {
		return nil, 0, fmt.Errorf("list workspaces: %w", err)
	}
	items, err := collect(rows, scanWorkspace)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.listCount(ctx, p, len(items), strings.TrimPrefix(from, " FROM "), args)
	return items, total, err
}
