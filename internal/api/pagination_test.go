package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
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

// TestListTotalCapped: a total above domain.TotalCap is flagged as a lower bound, counts only
// its pages, and every full page of such a list offers a next_cursor (the total cannot say
// whether more follow); the published schema states the cap the code applies.
func TestListTotalCapped(t *testing.T) {
	type item struct {
		ID        string      `json:"id"`
		CreatedAt domain.Time `json:"created_at"`
	}
	page := func(n int) []item {
		items := make([]item, n)
		for i := range items {
			items[i] = item{ID: fmt.Sprintf("x%d", i), CreatedAt: domain.Now()}
		}
		return items
	}
	capN := domain.TotalCap
	for _, c := range []struct {
		name         string
		page, items  int
		total, pages int
		capped, next bool
	}{
		{"at the cap", 1, 100, capN, capN / 100, false, true},
		{"the last full page at the cap", capN / 100, 100, capN, capN / 100, false, false},
		{"counted past the cap", 1, 100, capN + 1, capN/100 + 1, true, true},
		{"a full page past the count", capN/100 + 2, 100, capN + 200, capN/100 + 2, true, true},
		{"the last page past the cap", capN/100 + 1, 50, capN + 50, capN/100 + 1, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			writeList(w, page(c.items), domain.Page{Page: c.page, Limit: 100}, c.total)
			var b struct{ Pagination Pagination }
			if err := json.Unmarshal(w.Body.Bytes(), &b); err != nil {
				t.Fatal(err)
			}
			p := b.Pagination
			if p.Total != c.total || p.TotalCapped != c.capped || p.TotalPages != c.pages || (p.NextCursor != nil) != c.next {
				t.Fatalf("total %d, capped %v, %d pages, next cursor %v; want %d, %v, %d, %v",
					p.Total, p.TotalCapped, p.TotalPages, p.NextCursor != nil, c.total, c.capped, c.pages, c.next)
			}
		})
	}

	// The published schema states the cap the code applies.
	want := fmt.Sprintf("%d,%03d", capN/1000, capN%1000)
	for name, phrase := range map[string]string{"Total": "counted up to " + want + ":", "TotalCapped": "more than " + want + " items"} {
		f, _ := reflect.TypeFor[Pagination]().FieldByName(name)
		if doc := f.Tag.Get("doc"); !strings.Contains(doc, phrase) {
			t.Errorf("the doc of %s does not say %q: %s", name, phrase, doc)
		}
	}
}
