package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentplane/agentplane/internal/secretbox"
)

// CredentialTypes lists the kinds of credential.
var CredentialTypes = []string{"api_key", "bearer_token", "basic_auth", "database_url", "oauth2"}

// Credential is a named secret of a workspace. Its value is stored only sealed (bound to the
// workspace and id) beside a masked form for display; no read returns the value itself.
type Credential struct {
	ID          string     `json:"id"`
	WorkspaceID string     `json:"workspace_id"`
	Name        string     `json:"name"`
	Type        string     `json:"type"`
	Provider    string     `json:"provider"`
	Description string     `json:"description"`
	Metadata    JSONObject `json:"metadata"`
	MaskedValue string     `json:"masked_value" doc:"The value as reads show it, e.g. sk-…abcd; the value itself is never returned."`
	CreatedAt   Time       `json:"created_at"`
	UpdatedAt   Time       `json:"updated_at"`
}

// CredentialFilter narrows CredentialList; empty fields match everything.
type CredentialFilter struct {
	Type     string
	Provider string
	Query    string // substring of name or description, case-insensitive
}

const credentialColumns = `id, workspace_id, name, type, provider, description, metadata, masked_value, created_at, updated_at`

func scanCredential(row interface{ Scan(...any) error }) (*Credential, error) {
	var c Credential
	if err := row.Scan(&c.ID, &c.WorkspaceID, &c.Name, &c.Type, &c.Provider, &c.Description, &c.Metadata,
		&c.MaskedValue, &c.CreatedAt, &c.UpdatedAt); err != nil {
		return nil, err
	}
	if c.Metadata == nil {
		c.Metadata = JSONObject{}
	}
	return &c, nil
}

// CredentialList returns one page of a workspace's credentials, newest first, and the total.
func (s *Store) CredentialList(ctx context.Context, ws string, f CredentialFilter, p Page) ([]*Credential, int, error) {
	where, args := whereClause("", ws, []cond{
		{"type = $%d", f.Type},
		{"provider = $%d", f.Provider},
		{likeBoth("name", "description"), likePattern(f.Query)},
	})
	rows, err := s.r.QueryContext(ctx, "SELECT "+credentialColumns+" FROM credentials"+where+pageClause("", p), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list credentials: %w", err)
	}
	items, err := collect(rows, scanCredential)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.listCount(ctx, p, len(items), "SELECT count(*) FROM credentials"+where, args)
	return items, total, err
}

// CredentialGet returns one credential of the workspace (masked).
func (s *Store) CredentialGet(ctx context.Context, ws, id string) (*Credential, error) {
	c, err := scanCredential(s.r.QueryRowContext(ctx, "SELECT "+credentialColumns+" FROM credentials WHERE workspace_id = $1 AND id = $2", ws, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("credential", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get credential %s: %w", id, err)
	}
	return c, nil
}

// CredentialCreate inserts a credential, sealing value with box for its workspace and id (a
// preset c.ID is kept). It returns the stored credential, masked.
func (s *Store) CredentialCreate(ctx context.Context, c *Credential, value string, box *secretbox.Box) (*Credential, error) {
	if box == nil {
		return nil, errors.New("create credential: no secret box")
	}
	if c.ID == "" {
		c.ID = NewID()
	}
	now := Now()
	_, err := s.exec(ctx, `INSERT INTO credentials (id, workspace_id, name, type, provider, description, metadata, secret,
		masked_value, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)`,
		c.ID, c.WorkspaceID, c.Name, c.Type, c.Provider, c.Description, c.Metadata, box.Seal(c.WorkspaceID, c.ID, value),
		secretbox.Mask(value), now)
	if err != nil {
		if isUniqueViolation(err) {
			return nil, &ConflictError{Message: fmt.Sprintf("credential %s already exists", c.ID)}
		}
		return nil, fmt.Errorf("insert credential: %w", err)
	}
	return s.CredentialGet(ctx, c.WorkspaceID, c.ID)
}

// CredentialPatch holds the fields of a credential to change; nil fields stay as they are.
// A new Value is sealed again and its masked form recomputed.
type CredentialPatch struct {
	Name        *string
	Description *string
	Provider    *string
	Metadata    *JSONObject
	Value       *string
}

// CredentialUpdate changes the given fields of a credential.
func (s *Store) CredentialUpdate(ctx context.Context, ws, id string, p CredentialPatch, box *secretbox.Box) (*Credential, error) {
	var sealed, masked *string
	if p.Value != nil {
		if box == nil {
			return nil, errors.New("update credential: no secret box")
		}
		sv, mv := box.Seal(ws, id, *p.Value), secretbox.Mask(*p.Value)
		sealed, masked = &sv, &mv
	}
	err := s.update(ctx, "credential", "credentials", ws, id, []set{
		{"name", p.Name}, {"description", p.Description}, {"provider", p.Provider}, {"metadata", p.Metadata},
		{"secret", sealed}, {"masked_value", masked},
	})
	if err != nil {
		return nil, err
	}
	return s.CredentialGet(ctx, ws, id)
}

// CredentialDelete removes a credential and returns it as it was. A credential that a data
// source or an MCP tool still uses is not deleted: the *ConflictError names the user.
func (s *Store) CredentialDelete(ctx context.Context, ws, id string) (*Credential, error) {
	var c *Credential
	err := s.InTx(ctx, func(tx *Store) error {
		var err error
		if c, err = tx.CredentialGet(ctx, ws, id); err != nil {
			return err
		}
		for _, user := range []struct{ table, kind string }{{"data_sources", "data source"}, {"mcp_tools", "MCP tool"}} {
			var userID, name string
			err := tx.w.QueryRowContext(ctx, "SELECT id, name FROM "+user.table+" WHERE workspace_id = $1 AND credential_id = $2 ORDER BY id LIMIT 1",
				ws, id).Scan(&userID, &name)
			if err == nil {
				return &ConflictError{Message: fmt.Sprintf("credential %s is used by %s %s (%q); detach or delete it first", id, user.kind, userID, name)}
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("check users of credential %s: %w", id, err)
			}
		}
		return tx.deleteRow(ctx, "credential", "credentials", ws, id)
	})
	return c, err
}

// CredentialReveal returns the value of a credential for the runtime that must use it. It is
// never exposed over HTTP.
func (s *Store) CredentialReveal(ctx context.Context, ws, id string, box *secretbox.Box) (string, error) {
	if box == nil {
		return "", errors.New("reveal credential: no secret box")
	}
	var sealed string
	err := s.r.QueryRowContext(ctx, "SELECT secret FROM credentials WHERE workspace_id = $1 AND id = $2", ws, id).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return "", notFound("credential", id)
	}
	if err != nil {
		return "", fmt.Errorf("read credential %s: %w", id, err)
	}
	v, err := box.Open(ws, id, sealed)
	if err != nil {
		return "", fmt.Errorf("open credential %s: %w", id, err)
	}
	return v, nil
}
