package store

import (
	"context"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/dbtest"
	"github.com/agentplane/agentplane/internal/domain"
)

// TestListPages: past TotalCap the count stops (a lower bound, flagged by being above the
// cap); a deep page read off the index holds the same rows as the walk of cursors reaching it;
// a cursor's page starts right after the row it names, whatever was added since.
func TestListPages(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		mustModel(t, s)
		ws := mustWorkspace(t, s, "a")
		a, err := s.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: "A", Type: "simple", Status: "active"}, &domain.AgentConfig{Model: "gpt-4o"}, "")
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		const runs = domain.TotalCap + 50
		if err := dbtest.FillHistory(ctx, s.db, string(s.dialect), dbtest.History{Workspace: ws, Agents: []string{a.ID}, Runs: runs,
			IDPrefix: "p", Start: now.Add(-time.Hour), End: now}); err != nil {
			t.Fatal(err)
		}

		first, total, err := s.ExecutionList(ctx, ws, domain.ExecutionFilter{}, domain.Page{Page: 1, Limit: 100})
		if err != nil || len(first) != 100 || total != domain.TotalCap+1 {
			t.Fatalf("page 1: %d items, total %d, %v; want 100 and %d (capped)", len(first), total, err, domain.TotalCap+1)
		}
		// Filtered below the cap, the count is exact: one run in 50 failed.
		if _, total, _ := s.ExecutionList(ctx, ws, domain.ExecutionFilter{Status: domain.StatusFailed}, domain.Page{Page: 1, Limit: 20}); total != runs/50 {
			t.Fatalf("failed runs: total %d, want %d", total, runs/50)
		}
		// Filtered above the cap, the count stops there too.
		if _, total, _ := s.ExecutionList(ctx, ws, domain.ExecutionFilter{AgentID: a.ID}, domain.Page{Page: 1, Limit: 20}); total != domain.TotalCap+1 {
			t.Fatalf("runs of the agent: total %d, want %d (capped)", total, domain.TotalCap+1)
		}
		// The last page (not full) knows its total without counting, even past the cap.
		last, total, _ := s.ExecutionList(ctx, ws, domain.ExecutionFilter{}, domain.Page{Page: runs/100 + 1, Limit: 100})
		if len(last) != runs%100 || total != runs {
			t.Fatalf("last page: %d items, total %d; want %d, %d", len(last), total, runs%100, runs)
		}

		// Page 7 read with OFFSET (ids found on the index) equals page 7 reached by cursors.
		page := first
		for n := 2; n <= 7; n++ {
			end := page[len(page)-1]
			if page, _, err = s.ExecutionList(ctx, ws, domain.ExecutionFilter{}, domain.Page{Page: n, Limit: 100, After: &domain.Keyset{CreatedAt: end.CreatedAt, ID: end.ID}}); err != nil {
				t.Fatal(err)
			}
		}
		deep, _, err := s.ExecutionList(ctx, ws, domain.ExecutionFilter{}, domain.Page{Page: 7, Limit: 100})
		if err != nil || len(deep) != 100 {
			t.Fatalf("page 7: %d items, %v", len(deep), err)
		}
		for i := range deep {
			if deep[i].ID != page[i].ID {
				t.Fatalf("page 7 item %d: %s by offset, %s by cursor", i, deep[i].ID, page[i].ID)
			}
			if i > 0 && deep[i].CreatedAt.After(deep[i-1].CreatedAt.Time) {
				t.Fatalf("page 7 is not newest first at %d", i)
			}
		}

		// A run added after page 1 was read does not shift the cursor's next page.
		x := &domain.Execution{WorkspaceID: ws, AgentID: a.ID, Source: "api", Status: domain.StatusPending, Input: domain.JSONObject{}, Metadata: domain.JSONObject{}}
		if err := s.ExecutionCreate(ctx, x, &domain.Trace{WorkspaceID: ws, Name: "new", Status: "running", Metadata: domain.JSONObject{}}); err != nil {
			t.Fatal(err)
		}
		end := first[len(first)-1]
		second, _, _ := s.ExecutionList(ctx, ws, domain.ExecutionFilter{}, domain.Page{Page: 2, Limit: 100, After: &domain.Keyset{CreatedAt: end.CreatedAt, ID: end.ID}})
		byOffset, _, _ := s.ExecutionList(ctx, ws, domain.ExecutionFilter{}, domain.Page{Page: 2, Limit: 100})
		if second[0].ID == end.ID || byOffset[0].ID != end.ID {
			t.Fatalf("after an insert: cursor page starts at %s, offset page at %s; the last of page 1 was %s", second[0].ID, byOffset[0].ID, end.ID)
		}
	})
}
