package api

import (
	"context"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/client"
)

func TestMemoryRoutes(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	agent, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Concierge", Type: "simple"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Other", Type: "simple"})
	if err != nil {
		t.Fatal(err)
	}
	mine, err := e.c.MemoryCreate(ctx, client.MemoryCreateRequest{AgentID: agent.ID, Key: "user.preferences", Content: "Prefers window seats.",
		Metadata: map[string]any{"source": "chat"}})
	if err != nil {
		t.Fatal(err)
	}
	if mine.AgentID == nil || *mine.AgentID != agent.ID || mine.Metadata["source"] != "chat" {
		t.Fatalf("created %+v", mine)
	}
	id := "/api/v1/memories/" + mine.ID
	big := strings.Repeat("x", 64<<10)
	e.run([]scenario{
		{name: "create workspace-wide", method: "POST", path: "/api/v1/memories", body: `{"content":"Office closes at 18:00 on Fridays."}`, status: 201,
			fields: map[string]any{"data.agent_id": nil, "data.key": "", "data.metadata": map[string]any{}}},
		{name: "create at the size limit", method: "POST", path: "/api/v1/memories", body: `{"key":"big","content":"` + big + `"}`, status: 201},
		// Rows made within one millisecond have no defined order, so only the set is checked.
		{name: "list", method: "GET", path: "/api/v1/memories", status: 200, fields: map[string]any{"pagination.total": 3},
			check: func(t *testing.T, b map[string]any) {
				keys := map[string]bool{}
				for _, m := range lookup(b, "data").([]any) {
					keys[m.(map[string]any)["key"].(string)] = true
				}
				if !keys["big"] || !keys["user.preferences"] || !keys[""] {
					t.Fatalf("keys %v", keys)
				}
			}},
		{name: "list by agent", method: "GET", path: "/api/v1/memories?agent_id=" + agent.ID, status: 200, fields: map[string]any{"pagination.total": 1, "data.0.id": mine.ID}},
		{name: "list by other agent", method: "GET", path: "/api/v1/memories?agent_id=" + other.ID, status: 200, fields: map[string]any{"pagination.total": 0}},
		{name: "list by key", method: "GET", path: "/api/v1/memories?key=user.preferences", status: 200, fields: map[string]any{"pagination.total": 1}},
		{name: "list key is exact", method: "GET", path: "/api/v1/memories?key=user", status: 200, fields: map[string]any{"pagination.total": 0}},
		{name: "list q content", method: "GET", path: "/api/v1/memories?q=WINDOW", status: 200, fields: map[string]any{"pagination.total": 1}},
		{name: "list q key", method: "GET", path: "/api/v1/memories?q=preferences", status: 200, fields: map[string]any{"pagination.total": 1}},
		{name: "list page", method: "GET", path: "/api/v1/memories?limit=2&page=2", status: 200,
			fields: map[string]any{"pagination.total": 3, "pagination.pages": 2, "pagination.page": 2, "data.1": nil},
			check: func(t *testing.T, b map[string]any) {
				if lookup(b, "data.0.id") == nil {
					t.Fatal("page 2 is empty")
				}
			}},
		{name: "list bad page", method: "GET", path: "/api/v1/memories?page=0", status: 400, code: "bad_request", message: "page"},
		{name: "list bad limit", method: "GET", path: "/api/v1/memories?limit=abc", status: 400, code: "bad_request", message: "limit"},
		{name: "get", method: "GET", path: id, status: 200, fields: map[string]any{"data.content": "Prefers window seats.", "data.agent_id": agent.ID}},
		{name: "get missing", method: "GET", path: "/api/v1/memories/nope", status: 404, code: "not_found", message: "memory nope"},
		{name: "create malformed", method: "POST", path: "/api/v1/memories", body: `{"content":"x"`, status: 400, code: "bad_request"},
		{name: "create content wrong type", method: "POST", path: "/api/v1/memories", body: `{"content":["x"]}`, status: 400, message: "content"},
		{name: "create metadata wrong type", method: "POST", path: "/api/v1/memories", body: `{"content":"x","metadata":[1]}`, status: 400, message: "metadata"},
		{name: "create blank content", method: "POST", path: "/api/v1/memories", body: `{"content":"  "}`, status: 422, code: "validation_error", message: "content"},
		{name: "create content too large", method: "POST", path: "/api/v1/memories", body: `{"content":"` + big + `y"}`, status: 422, message: "content"},
		{name: "create key too long", method: "POST", path: "/api/v1/memories", body: `{"key":"` + strings.Repeat("k", 201) + `","content":"x"}`, status: 422, message: "key"},
		{name: "create missing agent", method: "POST", path: "/api/v1/memories", body: `{"agent_id":"nope","content":"x"}`, status: 422, message: "agent_id"},
		{name: "patch", method: "PATCH", path: id, body: `{"content":"Prefers aisle seats now.","metadata":{"source":"email"}}`, status: 200,
			fields: map[string]any{"data.content": "Prefers aisle seats now.", "data.metadata.source": "email", "data.key": "user.preferences", "data.agent_id": agent.ID}},
		{name: "patch move to other agent", method: "PATCH", path: id, body: `{"agent_id":"` + other.ID + `"}`, status: 200, fields: map[string]any{"data.agent_id": other.ID}},
		{name: "patch make workspace-wide", method: "PATCH", path: id, body: `{"agent_id":""}`, status: 200, fields: map[string]any{"data.agent_id": nil}},
		{name: "patch back to agent", method: "PATCH", path: id, body: `{"agent_id":"` + agent.ID + `"}`, status: 200, fields: map[string]any{"data.agent_id": agent.ID}},
		{name: "patch missing agent", method: "PATCH", path: id, body: `{"agent_id":"nope"}`, status: 422, message: "agent_id"},
		{name: "patch blank content", method: "PATCH", path: id, body: `{"content":""}`, status: 422, message: "content"},
		{name: "patch wrong type", method: "PATCH", path: id, body: `{"key":7}`, status: 400, message: "key"},
		{name: "patch missing", method: "PATCH", path: "/api/v1/memories/nope", body: `{"key":"x"}`, status: 404, code: "not_found"},
		{name: "delete", method: "DELETE", path: "/api/v1/memories/" + mine.ID, status: 200, fields: map[string]any{"data.id": mine.ID, "data.content": "Prefers aisle seats now."}},
		{name: "gone", method: "GET", path: id, status: 404},
		{name: "delete missing", method: "DELETE", path: id, status: 404, code: "not_found"},
	})

	// Memories of an agent go with it; workspace-wide ones stay.
	if _, err := e.c.MemoryCreate(ctx, client.MemoryCreateRequest{AgentID: other.ID, Content: "Speaks French."}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.AgentDelete(ctx, other.ID); err != nil {
		t.Fatal(err)
	}
	l, err := e.c.MemoryList(ctx, client.ListMemoriesParams{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Pagination.Total != 2 {
		t.Fatalf("after deleting the agent, %d memories remain, want the 2 workspace-wide ones", l.Pagination.Total)
	}
	for _, m := range l.Data {
		if m.AgentID != nil {
			t.Fatalf("memory of a deleted agent remains: %+v", m)
		}
	}
	key := "renamed"
	if _, err := e.c.MemoryUpdate(ctx, l.Data[0].ID, client.MemoryUpdateRequest{Key: &key}); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.c.MemoryList(ctx, client.ListMemoriesParams{Key: "renamed"}); got.Pagination.Total != 1 {
		t.Fatalf("key filter through the client: %+v", got)
	}
}
