package store

import (
	"context"
	"testing"
)

func TestExecutionsQueued(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		mustModel(t, s)
		ws := mustWorkspace(t, s, "a")
		a, err := s.AgentCreate(ctx, &Agent{WorkspaceID: ws, Name: "A", Type: "simple", Status: "active"}, &AgentConfig{Model: "gpt-4o"}, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, status := range []string{StatusPending, StatusPending, StatusPending, StatusRunning} {
			x := &Execution{WorkspaceID: ws, AgentID: a.ID, AgentVersionID: a.ActiveVersionID, Source: "api", Status: status,
				Input: JSONObject{}, Metadata: JSONObject{}, TimeoutMS: 1000}
			if err := s.ExecutionCreate(ctx, x, &Trace{WorkspaceID: ws, Name: "A"}); err != nil {
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
