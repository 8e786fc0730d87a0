package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentplane/agentplane/internal/domain"
)

const dataSourceColumns = `d.id, d.workspace_id, d.name, d.type, d.description, d.credential_id, d.active_version_id,
	v.version, d.version_seq, v.config, d.created_at, d.updated_at`

const dataSourceFrom = ` FROM data_sources d LEFT JOIN data_source_versions v ON v.id = d.active_version_id`

func scanDataSource(row interface{ Scan(...any) error }) (*domain.DataSource, error) {
	var d domain.DataSource
	var activeVersion sql.NullInt64
	if err := row.Scan(&d.ID, &d.WorkspaceID, &d.Name, &d.Type, &d.Description, &d.CredentialID, &d.ActiveVersionID,
		&activeVersion, &d.VersionCount, &d.Config, &d.CreatedAt, &d.UpdatedAt); err != nil {
		return nil, err
	}
	if activeVersion.Valid {
		n := int(activeVersion.Int64)
		d.ActiveVersion = &n
	}
	if d.Config == nil {
		d.Config = domain.JSONObject{}
	}
	return &d, nil
}

// DataSourceList returns one page of a workspace's data sources, newest first, and the total.
func (s *Store) DataSourceList(ctx context.Context, ws string, f domain.DataSourceFilter, p domain.Page) ([]*domain.DataSource, int, error) {
	where, args := whereClause("d", ws, []cond{
		{"d.type = $%d", f.Type},
		{likeBoth("d.name", "d.description"), likePattern(f.Query)},
	})
	page, pargs := pageClause("d", p, args)
	rows, err := s.r.QueryContext(ctx, "SELECT "+dataSourceColumns+dataSourceFrom+where+page, pargs...)
	if err != nil {
		return nil, 0, fmt.Errorf("list data sources: %w", err)
	}
	items, err := collect(rows, scanDataSource)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.listCount(ctx, p, len(items), "data_sources d"+where, args)
	return items, total, err
}

// DataSourceGet returns one data source of the workspace with its active config.
func (s *Store) DataSourceGet(ctx context.Context, ws, id string) (*domain.DataSource, error) {
	d, err := scanDataSource(s.r.QueryRowContext(ctx, "SELECT "+dataSourceColumns+dataSourceFrom+" WHERE d.workspace_id = $1 AND d.id = $2", ws, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("data source", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get data source %s: %w", id, err)
	}
	return d, nil
}

// DataSourceCreate inserts a data source (a preset d.ID is kept) and its version 1 from
// config, which becomes active, in one transaction.
func (s *Store) DataSourceCreate(ctx context.Context, d *domain.DataSource, config domain.JSONObject, notes string) (*domain.DataSource, error) {
	if d.ID == "" {
		d.ID = NewID()
	}
	now := domain.Now()
	err := s.InTx(ctx, func(tx *Store) error {
		_, err := tx.exec(ctx, `INSERT INTO data_sources (id, workspace_id, name, type, description, credential_id,
			version_seq, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, 0, $7, $7)`,
			d.ID, d.WorkspaceID, d.Name, d.Type, d.Description, d.CredentialID, now)
		if err != nil {
			if isUniqueViolation(err) {
				return &ConflictError{Message: fmt.Sprintf("data source %s already exists", d.ID)}
			}
			return fmt.Errorf("insert data source: %w", err)
		}
		v := &domain.DataSourceVersion{WorkspaceID: d.WorkspaceID, DataSourceID: d.ID, Config: config, Notes: notes}
		if _, err := tx.DataSourceVersionCreate(ctx, v); err != nil {
			return err
		}
		return tx.DataSourceVersionPromote(ctx, d.WorkspaceID, d.ID, v.ID)
	})
	if err != nil {
		return nil, err
	}
	return s.DataSourceGet(ctx, d.WorkspaceID, d.ID)
}

// DataSourceUpdate changes the given fields of a data source. Its configuration changes only
// by creating and promoting versions.
func (s *Store) DataSourceUpdate(ctx context.Context, ws, id string, p domain.DataSourcePatch) (*domain.DataSource, error) {
	err := s.update(ctx, "data source", "data_sources", ws, id, []set{
		{"name", p.Name}, {"description", p.Description}, {"credential_id", p.CredentialID},
	})
	if err != nil {
		return nil, err
	}
	return s.DataSourceGet(ctx, ws, id)
}

// DataSourceDelete removes a data source with its versions and returns it as it was.
func (s *Store) DataSourceDelete(ctx context.Context, ws, id string) (*domain.DataSource, error) {
	return deleteAsWas(ctx, s, "data source", "data_sources", ws, id, (*Store).DataSourceGet, func(tx *Store, _ *domain.DataSource) error {
		if _, err := tx.exec(ctx, "DELETE FROM data_source_versions WHERE workspace_id = $1 AND data_source_id = $2", ws, id); err != nil {
			return fmt.Errorf("delete versions of data source %s: %w", id, err)
		}
		return nil
	})
}

const dataSourceVersionColumns = `v.id, v.workspace_id, v.data_source_id, v.version, v.config, v.notes, v.created_at,
	(d.active_version_id IS NOT NULL AND d.active_version_id = v.id)`

func scanDataSourceVersion(row interface{ Scan(...any) error }) (*domain.DataSourceVersion, error) {
	var v domain.DataSourceVersion
	if err := row.Scan(&v.ID, &v.WorkspaceID, &v.DataSourceID, &v.Version, &v.Config, &v.Notes, &v.CreatedAt, &v.IsActive); err != nil {
		return nil, err
	}
	if v.Config == nil {
		v.Config = domain.JSONObject{}
	}
	return &v, nil
}

// DataSourceVersionList returns one page of a data source's versions, newest first.
func (s *Store) DataSourceVersionList(ctx context.Context, ws, dataSourceID string, p domain.Page) ([]*domain.DataSourceVersion, int, error) {
	if _, err := s.DataSourceGet(ctx, ws, dataSourceID); err != nil {
		return nil, 0, err
	}
	rows, err := s.r.QueryContext(ctx, "SELECT "+dataSourceVersionColumns+` FROM data_source_versions v JOIN data_sources d ON d.id = v.data_source_id
		WHERE v.workspace_id = $1 AND v.data_source_id = $2 ORDER BY v.version DESC`+limitClause(p), ws, dataSourceID)
	if err != nil {
		return nil, 0, fmt.Errorf("list data source versions: %w", err)
	}
	items, err := collect(rows, scanDataSourceVersion)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.listCount(ctx, p, len(items), "data_source_versions WHERE workspace_id = $1 AND data_source_id = $2", []any{ws, dataSourceID})
	return items, total, err
}

// DataSourceVersionGet returns one version of a data source.
func (s *Store) DataSourceVersionGet(ctx context.Context, ws, dataSourceID, versionID string) (*domain.DataSourceVersion, error) {
	v, err := scanDataSourceVersion(s.r.QueryRowContext(ctx, "SELECT "+dataSourceVersionColumns+` FROM data_source_versions v JOIN data_sources d ON d.id = v.data_source_id
		WHERE v.workspace_id = $1 AND v.data_source_id = $2 AND v.id = $3`, ws, dataSourceID, versionID))
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := s.DataSourceGet(ctx, ws, dataSourceID); err != nil {
			return nil, err
		}
		return nil, notFound("data source version", versionID)
	}
	if err != nil {
		return nil, fmt.Errorf("get data source version %s: %w", versionID, err)
	}
	return v, nil
}

// DataSourceVersionCreate adds the next version of a data source without changing the active
// one. Version numbers come from a per-data-source counter, so they are never reused; a preset
// v.ID is kept, and a preset v.Version is used when it is past the counter.
func (s *Store) DataSourceVersionCreate(ctx context.Context, v *domain.DataSourceVersion) (*domain.DataSourceVersion, error) {
	if v.ID == "" {
		v.ID = NewID()
	}
	if v.Config == nil {
		v.Config = domain.JSONObject{}
	}
	err := s.InTx(ctx, func(tx *Store) error {
		n, err := tx.nextVersion(ctx, "data source", "data_sources", v.WorkspaceID, v.DataSourceID, v.Version)
		if err != nil {
			return err
		}
		v.Version = n
		_, err = tx.exec(ctx, `INSERT INTO data_source_versions (id, workspace_id, data_source_id, version, config, notes, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, v.ID, v.WorkspaceID, v.DataSourceID, v.Version, v.Config, v.Notes, domain.Now())
		if isUniqueViolation(err) {
			return &ConflictError{Message: fmt.Sprintf("data source version %s or number %d already exists", v.ID, v.Version)}
		}
		if err != nil {
			return fmt.Errorf("insert data source version: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.DataSourceVersionGet(ctx, v.WorkspaceID, v.DataSourceID, v.ID)
}

// DataSourceVersionPromote makes a version the data source's active one.
func (s *Store) DataSourceVersionPromote(ctx context.Context, ws, dataSourceID, versionID string) error {
	return s.InTx(ctx, func(tx *Store) error {
		if _, err := tx.DataSourceVersionGet(ctx, ws, dataSourceID, versionID); err != nil {
			return err
		}
		_, err := tx.exec(ctx, "UPDATE data_sources SET active_version_id = $1, updated_at = $2 WHERE workspace_id = $3 AND id = $4",
			versionID, domain.Now(), ws, dataSourceID)
		if err != nil {
			return fmt.Errorf("promote data source version %s: %w", versionID, err)
		}
		return nil
	})
}
