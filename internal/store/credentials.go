package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentplane/agentplane/internal/domain"
)

const credentialColumns = `id, workspace_id, name, type, provider, description, metadata, masked_value, valid,
	last_validated_at, validation_message, created_at, updated_at`

func scanCredential(row interface{ Scan(...any) error }) (*domain.Credential, error) {
	var c domain.Credential
	var valid sql.NullBool
	var validated domain.Time
	if err := row.Scan(&c.ID, &c.WorkspaceID, &c.Name, &c.Type, &c.Provider, &c.Description, &c.Metadata,
		&c.MaskedValue, &valid, &validated, &c.ValidationMessage, &c.CreatedAt, &c.UpdatedAt); err != nil {
		return nil, err
	}
	if c.Metadata == nil {
		c.Metadata = domain.JSONObject{}
	}
	if valid.Valid {
		c.Valid = &valid.Bool
	}
	if !validated.IsZero() {
		c.LastValidatedAt = &validated
	}
	return &c, nil
}

// CredentialForProvider returns the credential a workspace's runs use for a model
// provider: the one whose metadata has "default": true, else the newest. None is a
// *NotFoundError.
func (s *Store) CredentialForProvider(ctx context.Context, ws, provider string) (*domain.Credential, error) {
	c, _, err := s.credentialFor(ctx, ws, "", provider, false)
	return c, err
}

// CredentialSealedFor finds the credential a run calls its model with (id when set, else
// the one CredentialForProvider picks) with its sealed value, in one read.
func (s *Store) CredentialSealedFor(ctx context.Context, ws, id, provider string) (*domain.Credential, string, error) {
	return s.credentialFor(ctx, ws, id, provider, true)
}

// credentialFor reads the credential with id, or the provider's default (else newest)
// credential, with its sealed value when withSecret is set.
func (s *Store) credentialFor(ctx context.Context, ws, id, provider string, withSecret bool) (*domain.Credential, string, error) {
	cols := credentialColumns
	if withSecret {
		cols += ", secret"
	}
	q, arg, what := "SELECT "+cols+" FROM credentials WHERE workspace_id = $1 AND id = $2", id, "credential"
	if id == "" {
		q, arg, what = "SELECT "+cols+" FROM credentials WHERE workspace_id = $1 AND provider = $2 ORDER BY created_at DESC, id DESC", provider, "credential for provider"
	}
	rows, err := s.r.QueryContext(ctx, q, ws, arg)
	if err != nil {
		return nil, "", fmt.Errorf("find %s %s: %w", what, arg, err)
	}
	defer rows.Close()
	var first *domain.Credential
	var firstSealed string
	for rows.Next() {
		var sealed string
		c, err := scanCredential(scanWith{rows, &sealed, withSecret})
		if err != nil {
			return nil, "", fmt.Errorf("find %s %s: %w", what, arg, err)
		}
		if d, _ := c.Metadata["default"].(bool); d {
			return c, sealed, nil
		}
		if first == nil {
			first, firstSealed = c, sealed
		}
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("find %s %s: %w", what, arg, err)
	}
	if first == nil {
		return nil, "", notFound(what, arg)
	}
	return first, firstSealed, nil
}

// scanWith scans a row of credentialColumns followed, when extra is set, by one more
// column into dst.
type scanWith struct {
	rows  *sql.Rows
	dst   *string
	extra bool
}

func (w scanWith) Scan(dest ...any) error {
	if w.extra {
		dest = append(dest, w.dst)
	}
	return w.rows.Scan(dest...)
}

// CredentialSetValidation records the outcome of validating a credential.
func (s *Store) CredentialSetValidation(ctx context.Context, ws, id string, valid bool, message string, at domain.Time) (*domain.Credential, error) {
	res, err := s.exec(ctx, "UPDATE credentials SET valid = $1, validation_message = $2, last_validated_at = $3 WHERE workspace_id = $4 AND id = $5",
		valid, message, at, ws, id)
	if err != nil {
		return nil, fmt.Errorf("record validation of credential %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, notFound("credential", id)
	}
	return s.CredentialGet(ctx, ws, id)
}

// CredentialList returns one page of a workspace's credentials, newest first, and the total.
func (s *Store) CredentialList(ctx context.Context, ws string, f domain.CredentialFilter, p domain.Page) ([]*domain.Credential, int, error) {
	where, args := whereClause("", ws, []cond{
		{"type = $%d", f.Type},
		{"provider = $%d", f.Provider},
		{likeBoth("name", "description"), likePattern(f.Query)},
	})
	return listPage(ctx, s, "credentials", credentialColumns, where, args, "", p, scanCredential)
}

// CredentialGet returns one credential of the workspace (masked).
func (s *Store) CredentialGet(ctx context.Context, ws, id string) (*domain.Credential, error) {
	return getByID(ctx, s, "credential", "credentials", credentialColumns, ws, id, scanCredential)
}

// CredentialCreate inserts a credential with its value as sealed for its workspace and id (so
// c.ID is set by the caller that sealed it). It returns the stored credential, masked.
func (s *Store) CredentialCreate(ctx context.Context, c *domain.Credential, secret domain.SealedSecret) (*domain.Credential, error) {
	if c.ID == "" {
		c.ID = NewID()
	}
	now := domain.Now()
	_, err := s.exec(ctx, `INSERT INTO credentials (id, workspace_id, name, type, provider, description, metadata, secret,
		masked_value, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)`,
		c.ID, c.WorkspaceID, c.Name, c.Type, c.Provider, c.Description, c.Metadata, secret.Sealed,
		secret.Masked, now)
	if err != nil {
		if isUniqueViolation(err) {
			return nil, &ConflictError{Message: fmt.Sprintf("credential %s already exists", c.ID)}
		}
		return nil, fmt.Errorf("insert credential: %w", err)
	}
	return s.CredentialGet(ctx, c.WorkspaceID, c.ID)
}

// CredentialUpdate changes the given fields of a credential; a new value comes sealed in
// secret (p.Value, the plaintext, is not read here).
func (s *Store) CredentialUpdate(ctx context.Context, ws, id string, p domain.CredentialPatch, secret *domain.SealedSecret) (*domain.Credential, error) {
	var sealed, masked *string
	if secret != nil {
		sealed, masked = &secret.Sealed, &secret.Masked
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
func (s *Store) CredentialDelete(ctx context.Context, ws, id string) (*domain.Credential, error) {
	return deleteAsWas(ctx, s, "credential", "credentials", ws, id, (*Store).CredentialGet, func(tx *Store, _ *domain.Credential) error {
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
		return tx.credentialTriggerUser(ctx, ws, id)
	})
}

// credentialTriggerUser returns a *ConflictError naming a trigger whose config sends its
// replies with credential id (bot_credential_id, or a WhatsApp trigger's credential_id).
func (s *Store) credentialTriggerUser(ctx context.Context, ws, id string) error {
	var triggerID, name string
	err := s.w.QueryRowContext(ctx, `SELECT id, name FROM agent_triggers WHERE workspace_id = $1
		AND (config LIKE $2 ESCAPE '\' OR config LIKE $3 ESCAPE '\') ORDER BY id LIMIT 1`, ws,
		"%\"bot_credential_id\":\""+likeEscaper.Replace(id)+"\"%", "%\"credential_id\":\""+likeEscaper.Replace(id)+"\"%").Scan(&triggerID, &name)
	if err == nil {
		return &ConflictError{Message: fmt.Sprintf("credential %s is used by trigger %s (%q); change or delete it first", id, triggerID, name)}
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("check triggers using credential %s: %w", id, err)
	}
	return nil
}

// CredentialSealed returns the sealed value of a credential.
func (s *Store) CredentialSealed(ctx context.Context, ws, id string) (string, error) {
	var sealed string
	err := s.r.QueryRowContext(ctx, "SELECT secret FROM credentials WHERE workspace_id = $1 AND id = $2", ws, id).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return "", notFound("credential", id)
	}
	if err != nil {
		return "", fmt.Errorf("read credential %s: %w", id, err)
	}
	return sealed, nil
}

// CredentialSecretsAll returns every credential's sealed value and mask, of every workspace.
func (s *Store) CredentialSecretsAll(ctx context.Context) ([]domain.CredentialSecret, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT id, workspace_id, secret, masked_value FROM credentials")
	if err != nil {
		return nil, fmt.Errorf("read credential masks: %w", err)
	}
	defer rows.Close()
	var all []domain.CredentialSecret
	for rows.Next() {
		var r domain.CredentialSecret
		if err := rows.Scan(&r.ID, &r.WorkspaceID, &r.Sealed, &r.Masked); err != nil {
			return nil, err
		}
		all = append(all, r)
	}
	return all, rows.Err()
}

// CredentialMaskSet replaces the masked value of a credential.
func (s *Store) CredentialMaskSet(ctx context.Context, ws, id, masked string) error {
	if _, err := s.exec(ctx, "UPDATE credentials SET masked_value = $1 WHERE workspace_id = $2 AND id = $3", masked, ws, id); err != nil {
		return fmt.Errorf("update mask of credential %s: %w", id, err)
	}
	return nil
}

// CredentialPoolSealed returns the credentials a workspace's runs call a model provider
// with, with their sealed values, newest first: the one whose metadata has "default": true alone, else
// every credential of the provider whose metadata.weight is not 0 (a pool; see
// internal/modelhealth). None is a *NotFoundError.
func (s *Store) CredentialPoolSealed(ctx context.Context, ws, provider string) ([]*domain.Credential, []string, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+credentialColumns+", secret FROM credentials WHERE workspace_id = $1 AND provider = $2 ORDER BY created_at DESC, id DESC", ws, provider)
	if err != nil {
		return nil, nil, fmt.Errorf("find credentials for provider %s: %w", provider, err)
	}
	defer rows.Close()
	var pool []*domain.Credential
	var sealed []string
	for rows.Next() {
		var v string
		c, err := scanCredential(scanWith{rows, &v, true})
		if err != nil {
			return nil, nil, fmt.Errorf("find credentials for provider %s: %w", provider, err)
		}
		if d, _ := c.Metadata["default"].(bool); d {
			pool, sealed = []*domain.Credential{c}, []string{v}
			break
		}
		if w, ok := c.Metadata["weight"].(float64); ok && w == 0 {
			continue
		}
		pool, sealed = append(pool, c), append(sealed, v)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("find credentials for provider %s: %w", provider, err)
	}
	if len(pool) == 0 {
		return nil, nil, notFound("credential for provider", provider)
	}
	return pool, sealed, nil
}
