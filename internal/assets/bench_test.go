package assets

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"path/filepath"
	"testing"

	"github.com/agentplane/agentplane/internal/blob"
	"github.com/agentplane/agentplane/internal/dbtest"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// BenchmarkCreate stores 64 KiB images and reads them back, as serve keeps them: on SQLite
// with blobs on disk, and (with TEST_DATABASE_URL) on PostgreSQL with blobs in the database,
// beside PostgreSQL with blobs on disk (--assets-dir) as the baseline of the database's cost.
// "new" stores new contents (a file written and synced, or a row inserted, each), "dedup" the
// same content again (a record only), "read" opens and reads a stored one whole.
//
//	TEST_DATABASE_URL=… go test ./internal/assets -run '^$' -bench Create -benchtime 2s
func BenchmarkCreate(b *testing.B) {
	for _, backend := range []string{"sqlite-dir", "postgres-dir", "postgres-database"} {
		for _, mode := range []string{"new", "dedup", "read"} {
			b.Run(backend+"/"+mode, func(b *testing.B) {
				ctx := context.Background()
				svc, ws := benchService(b, backend)
				img := make([]byte, 64<<10)
				b.SetBytes(int64(len(img)))
				a, err := svc.Create(ctx, Input{WorkspaceID: ws, ExecutionID: "x", MimeType: "image/png", Source: domain.AssetSourceModel}, img)
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for i := 1; b.Loop(); i++ {
					if mode == "read" {
						_, f, err := svc.Open(ctx, ws, a.ID)
						if err != nil {
							b.Fatal(err)
						}
						got, err := io.ReadAll(f)
						f.Close()
						if err != nil || !bytes.Equal(got, img) {
							b.Fatalf("read %d bytes: %v", len(got), err)
						}
						continue
					}
					if mode == "new" {
						binary.LittleEndian.PutUint64(img, uint64(i))
					}
					if _, err := svc.Create(ctx, Input{WorkspaceID: ws, ExecutionID: "x", MimeType: "image/png", Source: domain.AssetSourceModel}, img); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchService opens the store and blob store of backend with one workspace.
func benchService(b *testing.B, backend string) (*Service, string) {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	url := "file:" + filepath.Join(dir, "a.db")
	if backend != "sqlite-dir" {
		if url = dbtest.PostgresURL(b); url == "" {
			b.Skip(dbtest.SkipMessage)
		}
	}
	st, err := store.Open(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	w, err := st.WorkspaceCreate(ctx, &domain.Workspace{Name: "a", Slug: "a"})
	if err != nil {
		b.Fatal(err)
	}
	var blobs blob.Store = blob.NewDatabase(st)
	if backend != "postgres-database" {
		if blobs, err = blob.NewDir(filepath.Join(dir, "blobs")); err != nil {
			b.Fatal(err)
		}
	}
	return New(st, blobs, 0), w.ID
}
