package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"

	"github.com/agentplane/agentplane/internal/domain"
)

// Blob bytes kept in the database (the blob_data table): the store behind blob.Database.
// A blob is written whole in one statement, so a reader never sees part of one, and read
// in chunks, so serving a large one never holds it whole in memory.

// BlobDataPut stores data as the blob sum of workspace ws, unless that blob is stored
// already (the same sum is the same bytes). The caller has checked that data hashes to sum.
func (s *Store) BlobDataPut(ctx context.Context, ws, sum string, data []byte) error {
	if _, err := s.exec(ctx, `INSERT INTO blob_data (workspace_id, sha256, size, data, created_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (workspace_id, sha256) DO NOTHING`, ws, sum, int64(len(data)), data, domain.Now()); err != nil {
		return fmt.Errorf("store blob %s: %w", sum, err)
	}
	return nil
}

// blobChunkSQL reads n bytes from byte off (0-based) of a blob, with its size. PostgreSQL's
// substring of bytea takes int positions: blobs are bounded far below 2 GiB.
var blobChunkSQL = map[Dialect]string{
	Postgres: "SELECT size, substring(data FROM $3::int + 1 FOR $4::int) FROM blob_data WHERE workspace_id = $1 AND sha256 = $2",
	SQLite:   "SELECT size, substr(data, $3 + 1, $4) FROM blob_data WHERE workspace_id = $1 AND sha256 = $2",
}

// BlobDataRead returns up to n bytes of the blob sum of workspace ws from byte off on
// (none past its end) and the blob's size; a *NotFoundError when it is not stored.
func (s *Store) BlobDataRead(ctx context.Context, ws, sum string, off int64, n int) ([]byte, int64, error) {
	if off < 0 || n < 0 || off > math.MaxInt32-int64(n) {
		return nil, 0, fmt.Errorf("read blob %s: invalid range %d+%d", sum, off, n)
	}
	var size int64
	var chunk []byte
	err := s.r.QueryRowContext(ctx, blobChunkSQL[s.dialect], ws, sum, off, n).Scan(&size, &chunk)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, notFound("blob", sum)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read blob %s: %w", sum, err)
	}
	return chunk, size, nil
}

// BlobDataSize returns the size of the blob sum of workspace ws; a *NotFoundError when it is
// not stored.
func (s *Store) BlobDataSize(ctx context.Context, ws, sum string) (int64, error) {
	var size int64
	err := s.r.QueryRowContext(ctx, "SELECT size FROM blob_data WHERE workspace_id = $1 AND sha256 = $2", ws, sum).Scan(&size)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, notFound("blob", sum)
	}
	if err != nil {
		return 0, fmt.Errorf("find blob %s: %w", sum, err)
	}
	return size, nil
}

// BlobDataDelete removes the blob sum of workspace ws; a *NotFoundError when it is not stored.
func (s *Store) BlobDataDelete(ctx context.Context, ws, sum string) error {
	res, err := s.exec(ctx, "DELETE FROM blob_data WHERE workspace_id = $1 AND sha256 = $2", ws, sum)
	if err != nil {
		return fmt.Errorf("delete blob %s: %w", sum, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("delete blob %s: %w", sum, err)
	} else if n == 0 {
		return notFound("blob", sum)
	}
	return nil
}
