package api

import (
	"context"
	"fmt"
	"net/url"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
)

// TestListCursor: next_cursor walks a whole list once each, unmoved by items created during
// the walk, ends with null, and is refused beside page or when it is not the server's.
func TestListCursor(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	for i := range 45 {
		if _, err := e.store.AgentCreate(ctx, &domain.Agent{WorkspaceID: e.ws, Name: fmt.Sprintf("agent %02d", i), Type: "simple", Status: "active"},
			&domain.AgentConfig{Model: "gpt-4o-mini"}, ""); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	next := ""
	walk := func(wantItems, wantPage int, more bool) scenario {
		return scenario{name: fmt.Sprintf("page %d", wantPage), method: "GET", status: 200,
			fields: map[string]any{"pagination.page": wantPage, "pagination.total_capped": false},
			check: func(t *testing.T, b map[string]any) {
				items := b["data"].([]any)
				if len(items) != wantItems {
					t.Fatalf("%d items, want %d", len(items), wantItems)
				}
				for _, it := range items {
					id := it.(map[string]any)["id"].(string)
					if seen[id] {
						t.Fatalf("agent %s came twice", id)
					}
					seen[id] = true
				}
				c, _ := lookup(b, "pagination.next_cursor").(string)
				if (c != "") != more {
					t.Fatalf("next_cursor %q, want one: %v", c, more)
				}
				next = c
			}}
	}
	first := walk(20, 1, true)
	first.path = "/api/v1/agents?limit=20"
	e.run([]scenario{first})
	// An agent created during the walk is newer than the cursor: the walk neither repeats nor
	// skips anything because of it.
	if _, err := e.store.AgentCreate(ctx, &domain.Agent{WorkspaceID: e.ws, Name: "late", Type: "simple", Status: "active"},
		&domain.AgentConfig{Model: "gpt-4o-mini"}, ""); err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct{ items, page int }{{20, 2}, {5, 3}} {
		sc := walk(w.items, w.page, w.page == 2)
		sc.path = "/api/v1/agents?limit=20&cursor=" + url.QueryEscape(next)
		e.run([]scenario{sc})
	}
	if len(seen) != 45 {
		t.Fatalf("the walk saw %d agents, want the 45 there were when it began", len(seen))
	}
	e.run([]scenario{
		{name: "page and cursor", method: "GET", path: "/api/v1/agents?page=2&cursor=" + url.QueryEscape(first.name), status: 400, message: "either page or cursor"},
		{name: "not a cursor", method: "GET", path: "/api/v1/agents?cursor=bm90IGpzb24", status: 400, message: "cursor"},
		{name: "not base64", method: "GET", path: "/api/v1/agents?cursor=%25%25", status: 400, message: "cursor"},
		{name: "page zero in a cursor", method: "GET", path: "/api/v1/agents?cursor=eyJwIjowfQ", status: 400, message: "cursor"},
		{name: "a list without keys walks by page", method: "GET", path: "/api/v1/guardrails/scanners?limit=1&cursor=eyJwIjoyfQ", status: 200,
			fields: map[string]any{"pagination.page": 2}},
	})
}
