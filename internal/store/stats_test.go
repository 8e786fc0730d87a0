package store

import (
	"context"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
)

func TestExecutionsQueued(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		mustModel(t, s)
		ws := mustWorkspace(t, s, "a")
		a, err := s.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: "A", Type: "simple", Status: "active"}, &domain.AgentConfig{Model: "gpt-4o"}, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, status := range []string{domain.StatusPending, domain.StatusPending, domain.StatusPending, domain.StatusRunning} {
			x := &domain.Execution{WorkspaceID: ws, AgentID: a.ID, AgentVersionID: a.ActiveVersionID, Source: "api", Status: status,
				Input: domain.JSONObject{}, Metadata: domain.JSONObject{}, TimeoutMS: 1000}
			if err := s.ExecutionCreate(ctx, x, &domain.Trace{WorkspaceID: ws, Name: "A"}); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := s.ExecutionsQueued(ctx, 100); err != nil || n != 3 {
			t.Fatalf("queued: %d %v", n, err)
		}
		if n, err := s.ExecutionsQueued(ctx, 2); err != nil || n != 2 {
			t.Fatalf("queued, bounded: %d %v", n, err)
		}
	})
}
