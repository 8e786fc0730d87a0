package assets

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/agentplane/agentplane/internal/blob"
	"github.com/agentplane/agentplane/internal/store"
)

// BenchmarkCreate stores 64 KiB images on a SQLite file with blobs on disk: new contents (a
// file written and synced each) and the same content again (a record only).
func BenchmarkCreate(b *testing.B) {
	for _, mode := range []string{"new", "dedup"} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			dir := b.TempDir()
			st, err := store.Open(ctx, "file:"+filepath.Join(dir, "a.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			w, err := st.WorkspaceCreate(ctx, &store.Workspace{Name: "a", Slug: "a"})
			if err != nil {
				b.Fatal(err)
			}
			blobs, err := blob.NewDir(filepath.Join(dir, "blobs"))
			if err != nil {
				b.Fatal(err)
			}
			svc := New(st, blobs, 0)
			img := make([]byte, 64<<10)
			b.SetBytes(int64(len(img)))
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if mode == "new" {
					binary.LittleEndian.PutUint64(img, uint64(i))
				}
				if _, err := svc.Create(ctx, Input{WorkspaceID: w.ID, ExecutionID: "x", MimeType: "image/png", Source: store.AssetSourceModel}, img); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
