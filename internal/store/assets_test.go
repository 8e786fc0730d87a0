package store

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
)

func TestAssets(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "a")
		other := mustWorkspace(t, s, "b")
		sumA, sumB := strings.Repeat("a", 64), strings.Repeat("b", 64)
		exec := "x1"
		create := func(ws, sum string, size int64, typ string, quota int64) (*domain.Asset, error) {
			var out *domain.Asset
			err := s.InTx(ctx, func(tx *Store) error {
				if _, err := tx.AssetBlobEnsure(ctx, ws, sum, size, quota); err != nil {
					return err
				}
				var err error
				out, err = tx.AssetInsert(ctx, &domain.Asset{WorkspaceID: ws, ExecutionID: &exec, Type: typ, MimeType: typ + "/x", Size: size,
					SHA256: sum, Source: domain.AssetSourceModel, Metadata: domain.JSONObject{"model": "m"}})
				return err
			})
			return out, err
		}
		a1, err := create(ws, sumA, 100, domain.AssetImage, 0)
		if err != nil {
			t.Fatal(err)
		}
		if a1.Size != 100 || a1.SHA256 != sumA || *a1.ExecutionID != "x1" || a1.Metadata["model"] != "m" {
			t.Fatalf("created %+v", a1)
		}
		// The same content again shares the blob, and costs no quota.
		a2, err := create(ws, sumA, 100, domain.AssetImage, 150)
		if err != nil {
			t.Fatal(err)
		}
		// A new content past the quota is refused, and nothing is written.
		_, err = create(ws, sumB, 60, domain.AssetAudio, 150)
		var qe *QuotaError
		if !errors.As(err, &qe) || qe.Used != 100 || qe.Size != 60 || qe.Quota != 150 {
			t.Fatalf("quota: %v", err)
		}
		a3, err := create(ws, sumB, 50, domain.AssetAudio, 150)
		if err != nil {
			t.Fatal(err)
		}
		// Another workspace counts apart.
		if _, err := create(other, sumA, 100, domain.AssetImage, 150); err != nil {
			t.Fatal(err)
		}
		st, err := s.AssetStorageGet(ctx, ws)
		if err != nil || st.Bytes != 150 || st.Count != 3 || st.Blobs != 2 || st.AssetBytes != 250 {
			t.Fatalf("storage %+v %v", st, err)
		}
		list, total, err := s.AssetList(ctx, ws, domain.AssetFilter{}, domain.Page{Page: 1, Limit: 2})
		if err != nil || total != 3 || len(list) != 2 || list[0].ID != a3.ID {
			t.Fatalf("list %v %d %v", list, total, err)
		}
		if list, total, _ = s.AssetList(ctx, ws, domain.AssetFilter{Type: domain.AssetImage, ExecutionID: "x1"}, domain.Page{Page: 1, Limit: 20}); total != 2 || len(list) != 2 {
			t.Fatalf("filtered %d", total)
		}
		if _, total, _ = s.AssetList(ctx, ws, domain.AssetFilter{ExecutionID: "nope"}, domain.Page{Page: 1, Limit: 20}); total != 0 {
			t.Fatalf("other execution %d", total)
		}
		if _, err := s.AssetGet(ctx, other, a1.ID); !IsNotFound(err) {
			t.Fatalf("cross-workspace get: %v", err)
		}
		if _, _, err := s.AssetDelete(ctx, other, a1.ID); !IsNotFound(err) {
			t.Fatalf("cross-workspace delete: %v", err)
		}
		// The first of two assets sharing a blob keeps it; the last frees it.
		if _, freed, err := s.AssetDelete(ctx, ws, a1.ID); err != nil || freed {
			t.Fatalf("delete first: %v %v", freed, err)
		}
		if rec, _ := s.AssetBlobRecorded(ctx, ws, sumA); !rec {
			t.Fatal("blob gone with an asset still using it")
		}
		if _, freed, err := s.AssetDelete(ctx, ws, a2.ID); err != nil || !freed {
			t.Fatalf("delete last: %v %v", freed, err)
		}
		if rec, _ := s.AssetBlobRecorded(ctx, ws, sumA); rec {
			t.Fatal("blob kept after its last asset")
		}
		if rec, _ := s.AssetBlobRecorded(ctx, other, sumA); !rec {
			t.Fatal("the other workspace's blob went too")
		}
		if st, _ := s.AssetStorageGet(ctx, ws); st.Bytes != 50 || st.Count != 1 {
			t.Fatalf("storage after delete %+v", st)
		}
		if _, err := s.AssetGet(ctx, ws, a1.ID); !IsNotFound(err) {
			t.Fatalf("deleted asset: %v", err)
		}
	})
}
