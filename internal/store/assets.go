package store

import (
	"context"
	"fmt"

	"github.com/agentplane/agentplane/internal/domain"
)

// QuotaError says that storing a new blob would take a workspace past its asset quota.
type QuotaError struct {
	Quota, Used, Size int64
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("storing %d bytes would exceed the workspace's asset quota (%d of %d bytes used)", e.Size, e.Used, e.Quota)
}

const assetColumns = `id, workspace_id, execution_id, type, mime_type, size, sha256, name, source, metadata, created_at`

func scanAsset(row interface{ Scan(...any) error }) (*domain.Asset, error) {
	var a domain.Asset
	if err := row.Scan(&a.ID, &a.WorkspaceID, &a.ExecutionID, &a.Type, &a.MimeType, &a.Size, &a.SHA256, &a.Name, &a.Source, &a.Metadata, &a.CreatedAt); err != nil {
		return nil, err
	}
	if a.Metadata == nil {
		a.Metadata = domain.JSONObject{}
	}
	return &a, nil
}

// AssetList returns one page of a workspace's assets, newest first, and the total count.
func (s *Store) AssetList(ctx context.Context, ws string, f domain.AssetFilter, p domain.Page) ([]*domain.Asset, int, error) {
	where, args := whereClause("", ws, []cond{
		{"execution_id = $%d", f.ExecutionID},
		{"type = $%d", f.Type},
	})
	return listPage(ctx, s, "assets", assetColumns, where, args, "", p, scanAsset)
}

// AssetGet returns one asset of the workspace.
func (s *Store) AssetGet(ctx context.Context, ws, id string) (*domain.Asset, error) {
	return getByID(ctx, s, "asset", "assets", assetColumns, ws, id, scanAsset)
}

// AssetBlobLock holds, until the caller's transaction ends, a lock on the blob sum of
// workspace ws, so that writing a blob with its record and removing a record with its blob
// take turns across nodes (PostgreSQL's transaction-scoped advisory lock). SQLite has one
// writer, whose transactions take turns already.
func (s *Store) AssetBlobLock(ctx context.Context, ws, sum string) error {
	if s.dialect != Postgres {
		return nil
	}
	if _, err := s.exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", "asset blob "+ws+" "+sum); err != nil {
		return fmt.Errorf("lock blob: %w", err)
	}
	return nil
}

// AssetBlobEnsure records the blob sum of workspace ws, unless it is recorded already, and
// reports whether it was new. A new blob must fit the quota (bytes; 0 is unlimited) with the
// workspace's other blobs, else it is a *QuotaError. Call it inside a transaction, with the
// asset's insert: with a quota on PostgreSQL it locks the workspace's row so that concurrent
// writers check the quota one at a time (SQLite has one writer).
func (s *Store) AssetBlobEnsure(ctx context.Context, ws, sum string, size, quota int64) (bool, error) {
	recorded, err := s.assetBlobRecorded(ctx, s.w, ws, sum)
	if err != nil || recorded {
		return false, err
	}
	if quota > 0 {
		if s.dialect == Postgres {
			var id string
			if err := s.w.QueryRowContext(ctx, "SELECT id FROM workspaces WHERE id = $1 FOR UPDATE", ws).Scan(&id); err != nil {
				return false, fmt.Errorf("lock workspace %s: %w", ws, err)
			}
		}
		var used int64
		if err := s.w.QueryRowContext(ctx, "SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT) FROM asset_blobs WHERE workspace_id = $1", ws).Scan(&used); err != nil {
			return false, fmt.Errorf("asset storage: %w", err)
		}
		if used+size > quota {
			return false, &QuotaError{Quota: quota, Used: used, Size: size}
		}
	}
	// Another writer may have recorded it meanwhile: then it is not new.
	res, err := s.exec(ctx, "INSERT INTO asset_blobs (workspace_id, sha256, size, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING", ws, sum, size, domain.Now())
	if err != nil {
		return false, fmt.Errorf("insert blob: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// AssetInsert inserts an asset whose blob is recorded (AssetBlobEnsure); a preset ID is kept.
func (s *Store) AssetInsert(ctx context.Context, a *domain.Asset) (*domain.Asset, error) {
	if a.ID == "" {
		a.ID = NewID()
	}
	if a.Metadata == nil {
		a.Metadata = domain.JSONObject{}
	}
	a.CreatedAt = domain.Now()
	_, err := s.exec(ctx, `INSERT INTO assets (id, workspace_id, execution_id, type, mime_type, size, sha256, name, source, metadata, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, a.ID, a.WorkspaceID, emptyAsNull(a.ExecutionID), a.Type, a.MimeType,
		a.Size, a.SHA256, a.Name, a.Source, a.Metadata, a.CreatedAt)
	if err != nil {
		if isUniqueViolation(err) {
			return nil, &ConflictError{Message: fmt.Sprintf("asset %s already exists", a.ID)}
		}
		return nil, fmt.Errorf("insert asset: %w", err)
	}
	return s.AssetGet(ctx, a.WorkspaceID, a.ID)
}

// AssetDelete removes an asset and returns it as it was; blobFreed reports that it was the
// last asset of its blob, whose record is removed with it (the caller then deletes the bytes).
func (s *Store) AssetDelete(ctx context.Context, ws, id string) (a *domain.Asset, blobFreed bool, err error) {
	err = s.InTx(ctx, func(tx *Store) error {
		if a, err = tx.AssetGet(ctx, ws, id); err != nil {
			return err
		}
		if err := tx.deleteRow(ctx, "asset", "assets", ws, id); err != nil {
			return err
		}
		res, err := tx.exec(ctx, `DELETE FROM asset_blobs WHERE workspace_id = $1 AND sha256 = $2
			AND NOT EXISTS (SELECT 1 FROM assets WHERE workspace_id = $1 AND sha256 = $2)`, ws, a.SHA256)
		if err != nil {
			return fmt.Errorf("release blob: %w", err)
		}
		n, err := res.RowsAffected()
		blobFreed = n > 0
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return a, blobFreed, nil
}

// AssetBlobRecorded reports whether workspace ws has a blob record for sum.
func (s *Store) AssetBlobRecorded(ctx context.Context, ws, sum string) (bool, error) {
	return s.assetBlobRecorded(ctx, s.r, ws, sum)
}

func (s *Store) assetBlobRecorded(ctx context.Context, q dbtx, ws, sum string) (bool, error) {
	var n int
	if err := q.QueryRowContext(ctx, "SELECT count(*) FROM asset_blobs WHERE workspace_id = $1 AND sha256 = $2", ws, sum).Scan(&n); err != nil {
		return false, fmt.Errorf("find blob: %w", err)
	}
	return n > 0, nil
}

// AssetStorageGet sums up what a workspace's assets take; QuotaBytes is left for the caller.
func (s *Store) AssetStorageGet(ctx context.Context, ws string) (*domain.AssetStorage, error) {
	var st domain.AssetStorage
	err := s.r.QueryRowContext(ctx, "SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT), count(*) FROM asset_blobs WHERE workspace_id = $1", ws).Scan(&st.Bytes, &st.Blobs)
	if err == nil {
		err = s.r.QueryRowContext(ctx, "SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT), count(*) FROM assets WHERE workspace_id = $1", ws).Scan(&st.AssetBytes, &st.Count)
	}
	if err != nil {
		return nil, fmt.Errorf("asset storage: %w", err)
	}
	return &st, nil
}
