package store

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
)

func TestDatasets(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "a")
		other := mustWorkspace(t, s, "b")
		d, err := s.DatasetCreate(ctx, &domain.Dataset{WorkspaceID: ws, Name: "qa", InputSchema: json.RawMessage(`{"type":"object"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.DatasetCreate(ctx, &domain.Dataset{WorkspaceID: ws, Name: "qa"}); err == nil {
			t.Fatal("duplicate name accepted")
		}
		if _, err := s.DatasetCreate(ctx, &domain.Dataset{WorkspaceID: other, Name: "qa"}); err != nil {
			t.Fatalf("same name in another workspace: %v", err)
		}

		// Items and the version move together, in the caller's transaction.
		err = s.InTx(ctx, func(tx *Store) error {
			if _, err := tx.DatasetTouch(ctx, ws, d.ID, 250); err != nil {
				return err
			}
			items := make([]*domain.DatasetItem, 250)
			for i := range items {
				items[i] = &domain.DatasetItem{Input: domain.JSONObject{"n": i}}
			}
			items[3].ExpectedOutput = json.RawMessage(`{"a":1}`)
			_, err := tx.DatasetItemsInsert(ctx, ws, d.ID, items)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := s.DatasetGet(ctx, ws, d.ID)
		if got.ItemCount != 250 || got.Version != 1 || string(got.InputSchema) != `{"type":"object"}` {
			t.Fatalf("after insert: %+v", got)
		}
		all, err := s.DatasetItemsAll(ctx, ws, d.ID)
		if err != nil || len(all) != 250 || string(all[3].ExpectedOutput) != `{"a":1}` || all[0].ExpectedOutput != nil {
			t.Fatalf("all items: %d %v", len(all), err)
		}
		page, total, err := s.DatasetItemList(ctx, ws, d.ID, domain.Page{Page: 2, Limit: 100})
		if err != nil || total != 250 || len(page) != 100 {
			t.Fatalf("page 2: %d of %d, %v", len(page), total, err)
		}
		if _, _, err := s.DatasetItemList(ctx, other, d.ID, domain.Page{Page: 1, Limit: 10}); !IsNotFound(err) {
			t.Fatalf("items of another workspace's dataset: %v", err)
		}

		// A failed write leaves neither items nor a new version.
		_ = s.InTx(ctx, func(tx *Store) error {
			if _, err := tx.DatasetTouch(ctx, ws, d.ID, 1); err != nil {
				return err
			}
			_, err := tx.DatasetItemsInsert(ctx, ws, d.ID, []*domain.DatasetItem{{ID: all[0].ID, Input: domain.JSONObject{}}})
			if err == nil {
				t.Error("duplicate item id accepted")
			}
			return err
		})
		got, _ = s.DatasetGet(ctx, ws, d.ID)
		if got.ItemCount != 250 || got.Version != 1 {
			t.Fatalf("after a failed write: %+v", got)
		}

		up, err := s.DatasetItemUpdate(ctx, ws, d.ID, all[3].ID, domain.DatasetItemPatch{ExpectedOutput: domain.PtrTo(json.RawMessage("null"))})
		if err != nil || up.ExpectedOutput != nil {
			t.Fatalf("clear expected output: %+v %v", up, err)
		}
		ds, err := s.DatasetUpdate(ctx, ws, d.ID, domain.DatasetPatch{InputSchema: domain.PtrTo(json.RawMessage("null")), Name: domain.PtrTo("qa2")})
		if err != nil || ds.InputSchema != nil || ds.Name != "qa2" {
			t.Fatalf("clear schema: %+v %v", ds, err)
		}
		if _, err := s.DatasetDelete(ctx, ws, d.ID); err != nil {
			t.Fatal(err)
		}
		if n, _ := s.count(ctx, "SELECT count(*) FROM dataset_items", nil); n != 0 {
			t.Fatalf("%d items left after the dataset was deleted", n)
		}
	})
}
