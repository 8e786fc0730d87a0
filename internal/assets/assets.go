// Package assets stores the media runs produce (and callers upload) as assets: a row in the
// store per asset and its bytes as a blob of the workspace, shared by the assets with the
// same bytes and removed with the last of them, within the workspace's quota.
package assets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"mime"
	"strings"
	"sync"

	"github.com/agentplane/agentplane/internal/blob"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// MaxSize bounds one asset's content (32 MiB): larger media is skipped, never stored.
const MaxSize = 32 << 20

// ErrTooLarge is returned by Create for content larger than MaxSize.
var ErrTooLarge = fmt.Errorf("an asset is at most %d bytes (32 MiB)", MaxSize)

// Service creates, opens and deletes assets. It is safe for concurrent use; the API and the
// runtime share one.
type Service struct {
	st    *store.Store
	blobs blob.Store
	quota int64
	// locks serialize, per workspace and content, the write of a blob with its record and
	// the removal of a record with its blob, so a blob is never removed under a new asset
	// (across nodes, store.AssetBlobLock does it on PostgreSQL).
	locks [64]sync.Mutex
}

// New returns a Service over the store and blob store; quota is the bytes each workspace
// may store (distinct contents counted once), 0 for unlimited.
func New(st *store.Store, blobs blob.Store, quota int64) *Service {
	return &Service{st: st, blobs: blobs, quota: quota}
}

// Quota is the per-workspace quota in bytes; 0 is unlimited.
func (s *Service) Quota() int64 { return s.quota }

func (s *Service) lock(ws, sum string) *sync.Mutex {
	h := fnv.New32a()
	h.Write([]byte(ws))
	h.Write([]byte(sum))
	return &s.locks[h.Sum32()%uint32(len(s.locks))]
}

// Input is what Create needs to know of an asset besides its bytes.
type Input struct {
	WorkspaceID string
	ExecutionID string // "" for none
	MimeType    string // "" or unparseable: application/octet-stream
	Name        string
	Source      string
	Metadata    domain.JSONObject
}

// Create stores data as a new asset. The bytes become a blob of the workspace unless it has
// them already; a new blob past the quota is a *store.QuotaError and nothing is stored.
func (s *Service) Create(ctx context.Context, n Input, data []byte) (*domain.Asset, error) {
	if len(data) > MaxSize {
		return nil, ErrTooLarge
	}
	mt := NormalizeMIME(n.MimeType)
	sum := blob.Sum(data)
	a := &domain.Asset{WorkspaceID: n.WorkspaceID, Type: TypeOf(mt), MimeType: mt, Size: int64(len(data)), SHA256: sum,
		Name: n.Name, Source: n.Source, Metadata: n.Metadata}
	if n.ExecutionID != "" {
		a.ExecutionID = &n.ExecutionID
	}
	mu := s.lock(n.WorkspaceID, sum)
	mu.Lock()
	defer mu.Unlock()
	// New bytes are written before the transaction, so that the database's writer (SQLite
	// has one) does not wait for the file's sync; content past the quota is refused first.
	recorded, err := s.st.AssetBlobRecorded(ctx, n.WorkspaceID, sum)
	if err != nil {
		return nil, err
	}
	wrote := false
	if !recorded {
		if s.quota > 0 {
			used, err := s.st.AssetStorageGet(ctx, n.WorkspaceID)
			if err != nil {
				return nil, err
			}
			if used.Bytes+a.Size > s.quota {
				return nil, &store.QuotaError{Quota: s.quota, Used: used.Bytes, Size: a.Size}
			}
		}
		if _, err := s.blobs.Put(ctx, n.WorkspaceID, sum, bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("store asset content: %w", err)
		}
		wrote = true
	}
	var out *domain.Asset
	err = s.st.InTx(ctx, func(tx *store.Store) error {
		if err := tx.AssetBlobLock(ctx, n.WorkspaceID, sum); err != nil {
			return err
		}
		if _, err := tx.AssetBlobEnsure(ctx, n.WorkspaceID, sum, a.Size, s.quota); err != nil {
			return err
		}
		// The bytes may be missing: removed by another node's delete of the last asset before
		// the blob's lock was taken here, or lost. They are written again.
		if _, err := s.blobs.Stat(ctx, n.WorkspaceID, sum); errors.Is(err, blob.ErrNotFound) {
			if _, err := s.blobs.Put(ctx, n.WorkspaceID, sum, bytes.NewReader(data)); err != nil {
				return fmt.Errorf("store asset content: %w", err)
			}
			wrote = true
		} else if err != nil {
			return err
		}
		var err error
		out, err = tx.AssetInsert(ctx, a)
		return err
	})
	if err != nil {
		if wrote {
			s.dropUnrecorded(context.WithoutCancel(ctx), n.WorkspaceID, sum)
		}
		return nil, err
	}
	return out, nil
}

// dropUnrecorded removes bytes written for an asset whose record was rolled back, unless
// another asset has recorded them meanwhile.
func (s *Service) dropUnrecorded(ctx context.Context, ws, sum string) {
	_ = s.st.InTx(ctx, func(tx *store.Store) error {
		if err := tx.AssetBlobLock(ctx, ws, sum); err != nil {
			return err
		}
		rec, err := tx.AssetBlobRecorded(ctx, ws, sum)
		if err != nil || rec {
			return err
		}
		return s.blobs.Delete(ctx, ws, sum)
	})
}

// Delete removes an asset and returns it as it was; its blob goes with the last asset using it.
func (s *Service) Delete(ctx context.Context, ws, id string) (*domain.Asset, error) {
	a, err := s.st.AssetGet(ctx, ws, id)
	if err != nil {
		return nil, err
	}
	mu := s.lock(ws, a.SHA256)
	mu.Lock()
	defer mu.Unlock()
	// The bytes are removed inside the transaction, under the blob's lock: a writer of the
	// same content on another node waits, then finds no record and writes them again.
	err = s.st.InTx(ctx, func(tx *store.Store) error {
		if err := tx.AssetBlobLock(ctx, ws, a.SHA256); err != nil {
			return err
		}
		var freed bool
		var err error
		if a, freed, err = tx.AssetDelete(ctx, ws, id); err != nil || !freed {
			return err
		}
		if err := s.blobs.Delete(context.WithoutCancel(ctx), ws, a.SHA256); err != nil && !errors.Is(err, blob.ErrNotFound) {
			return fmt.Errorf("delete asset content: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// Open returns an asset with its content for reading.
func (s *Service) Open(ctx context.Context, ws, id string) (*domain.Asset, blob.File, error) {
	a, err := s.st.AssetGet(ctx, ws, id)
	if err != nil {
		return nil, nil, err
	}
	f, err := s.blobs.Open(ctx, ws, a.SHA256)
	if err != nil {
		return nil, nil, fmt.Errorf("open content of asset %s: %w", id, err)
	}
	return a, f, nil
}

// Storage sums up what a workspace's assets take, with the quota.
func (s *Service) Storage(ctx context.Context, ws string) (*domain.AssetStorage, error) {
	st, err := s.st.AssetStorageGet(ctx, ws)
	if err != nil {
		return nil, err
	}
	st.QuotaBytes = s.quota
	return st, nil
}

// NormalizeMIME returns the media type without parameters, lower case; an empty or invalid
// one is application/octet-stream.
func NormalizeMIME(mt string) string {
	t, _, err := mime.ParseMediaType(mt)
	if err != nil || !strings.Contains(t, "/") {
		return "application/octet-stream"
	}
	return t
}

// TypeOf is the asset type of a media type: image, audio, or file for anything else.
func TypeOf(mimeType string) string {
	switch {
	case strings.HasPrefix(mimeType, "image/"):
		return domain.AssetImage
	case strings.HasPrefix(mimeType, "audio/"):
		return domain.AssetAudio
	}
	return domain.AssetFile
}
