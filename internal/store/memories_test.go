package store

import (
	"context"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

func TestMemoryMatch(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		mustModel(t, s)
		ws := mustWorkspace(t, s, "a")
		a, err := s.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: "A", Type: "simple", Status: "active", Tags: domain.Strings{}, Metadata: domain.JSONObject{}},
			&domain.AgentConfig{Model: "gpt-4o"}, "")
		if err != nil {
			t.Fatal(err)
		}
		agent, user := a.ID, "cust-1"
		mk := func(m domain.Memory) *domain.Memory {
			t.Helper()
			m.WorkspaceID, m.Metadata = ws, domain.JSONObject{}
			got, err := s.MemoryCreate(ctx, &m)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * time.Millisecond) // "newest first" orders by created_at, in milliseconds
			return got
		}
		ship := mk(domain.Memory{AgentID: &agent, Key: "shipping", Content: "Orders ship from Lisbon within two days."})
		refund := mk(domain.Memory{AgentID: &agent, Key: "refunds", Content: "Refunds are paid back within 14 days of the return."})
		mk(domain.Memory{AgentID: &agent, Key: "tone", Content: "Answer politely and briefly."})
		mine := mk(domain.Memory{EndUserID: &user, Content: "The customer prefers email over phone calls."})

		got, err := s.MemoryMatch(ctx, ws, domain.MemoryScope{AgentID: agent}, "When will my order be shipped?", 2)
		if err != nil || len(got) != 1 || got[0].ID != ship.ID {
			t.Fatalf("match: %v %v", memoryKeys(got), err) // stemming: order~orders, shipped~ship
		}
		// Several matches: the most relevant first, and no more than the limit.
		got, _ = s.MemoryMatch(ctx, ws, domain.MemoryScope{AgentID: agent}, "Do orders ship from Lisbon, and what about refunds?", 5)
		if len(got) != 2 || got[0].ID != ship.ID || got[1].ID != refund.ID {
			t.Fatalf("ranking: %v", memoryKeys(got))
		}
		if got, _ = s.MemoryMatch(ctx, ws, domain.MemoryScope{AgentID: agent}, "Do orders ship from Lisbon, and what about refunds?", 1); len(got) != 1 || got[0].ID != ship.ID {
			t.Fatalf("limit: %v", memoryKeys(got))
		}
		if got, _ = s.MemoryMatch(ctx, ws, domain.MemoryScope{AgentID: agent}, "", 10); len(got) != 0 {
			t.Fatalf("no words matched %v", memoryKeys(got))
		}
		got, _ = s.MemoryMatch(ctx, ws, domain.MemoryScope{EndUserID: user}, "how should we email them", 10)
		if len(got) != 1 || got[0].ID != mine.ID {
			t.Fatalf("end user scope: %v", memoryKeys(got))
		}
		if got, _ = s.MemoryMatch(ctx, mustWorkspace(t, s, "b"), domain.MemoryScope{EndUserID: user}, "email", 10); len(got) != 0 {
			t.Fatalf("another workspace sees %v", memoryKeys(got))
		}
		// Only the memories matching a word of the text; stop words match nothing.
		if got, err = s.MemoryMatch(ctx, ws, domain.MemoryScope{AgentID: agent}, "Is my refund on its way?", 10); err != nil || len(got) != 1 || got[0].ID != refund.ID {
			t.Fatalf("match: %v %v", memoryKeys(got), err)
		}
		if got, _ = s.MemoryMatch(ctx, ws, domain.MemoryScope{AgentID: agent}, "What is it that you do?", 10); len(got) != 0 {
			t.Fatalf("stop words matched %v", memoryKeys(got))
		}
		// The agent's own memories leave out those it keeps for one session or end user.
		sess := "sess-1"
		kept := mk(domain.Memory{AgentID: &agent, SessionID: &sess, Content: "In this chat the refund was already promised."})
		if got, _ = s.MemoryMatch(ctx, ws, domain.MemoryScope{AgentID: agent}, "refund", 10); len(got) != 1 || got[0].ID != refund.ID {
			t.Fatalf("agent scope sees a session's memory: %v", memoryKeys(got))
		}
		if got, _ = s.MemoryMatch(ctx, ws, domain.MemoryScope{SessionID: sess}, "refund", 10); len(got) != 1 || got[0].ID != kept.ID {
			t.Fatalf("session scope: %v", memoryKeys(got))
		}
		if got, _ = s.MemoryMatch(ctx, ws, domain.MemoryScope{SessionID: "sess-2"}, "refund", 10); len(got) != 0 {
			t.Fatalf("another session sees %v", memoryKeys(got))
		}
		// Quotes, operators and other syntax of the search languages are only text.
		if _, err := s.MemoryMatch(ctx, ws, domain.MemoryScope{AgentID: agent}, `"ship" OR NEAR(a b) * ^ & | ! ' : -x`, 5); err != nil {
			t.Fatalf("hostile text: %v", err)
		}
		// Updates and deletes reach the index.
		content := "Orders now ship from Porto."
		if _, err := s.MemoryUpdate(ctx, ws, refund.ID, domain.MemoryPatch{Content: &content}); err != nil {
			t.Fatal(err)
		}
		if got, _ = s.MemoryMatch(ctx, ws, domain.MemoryScope{AgentID: agent}, "porto", 1); len(got) != 1 || got[0].ID != refund.ID {
			t.Fatalf("after update: %v", memoryKeys(got))
		}
		if _, err := s.AgentDelete(ctx, ws, agent); err != nil {
			t.Fatal(err)
		}
		if got, _ = s.MemoryMatch(ctx, ws, domain.MemoryScope{AgentID: agent}, "porto ship", 5); len(got) != 0 {
			t.Fatalf("memories of a deleted agent: %v", memoryKeys(got))
		}
		if _, err := s.MemoryMatch(ctx, ws, domain.MemoryScope{}, "x", 1); err == nil {
			t.Fatal("a search without a scope")
		}
	})
}

func memoryKeys(ms []*domain.Memory) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Key + ":" + m.Content[:min(12, len(m.Content))]
	}
	return out
}
