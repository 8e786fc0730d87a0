package store

import (
	"context"
	"testing"
	"time"
)

func TestLimitCounts(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		mustModel(t, s)
		ws, other := mustWorkspace(t, s, "a"), mustWorkspace(t, s, "b")
		if n, err := s.AgentCount(ctx, ws); err != nil || n != 0 {
			t.Fatalf("empty: %d %v", n, err)
		}
		a, err := s.AgentCreate(ctx, &Agent{WorkspaceID: ws, Name: "A", Type: "simple", Status: "active"}, &AgentConfig{Model: "gpt-4o"}, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.AgentCreate(ctx, &Agent{WorkspaceID: other, Name: "B", Type: "simple", Status: "active"}, &AgentConfig{Model: "gpt-4o"}, ""); err != nil {
			t.Fatal(err)
		}
		if n, err := s.AgentCount(ctx, ws); err != nil || n != 1 {
			t.Fatalf("agents: %d %v", n, err)
		}
		for _, st := range []string{StatusPending, StatusPending, StatusRunning} {
			x := &Execution{WorkspaceID: ws, AgentID: a.ID, AgentVersionID: a.ActiveVersionID, Source: "api", Status: st,
				Input: JSONObject{}, Metadata: JSONObject{}, TimeoutMS: 1000}
			if err := s.ExecutionCreate(ctx, x, &Trace{WorkspaceID: ws, AgentID: &a.ID, Name: "A"}); err != nil {
				t.Fatal(err)
			}
		}
		hourAgo := Time{time.Now().Add(-time.Hour)}
		for _, c := range []struct {
			name     string
			ws       string
			since    Time
			statuses []string
			want     int
		}{
			{"all", ws, Time{}, nil, 3},
			{"since an hour ago", ws, hourAgo, nil, 3},
			{"since the future", ws, Time{time.Now().Add(time.Hour)}, nil, 0},
			{"pending", ws, Time{}, []string{StatusPending}, 2},
			{"live", ws, hourAgo, []string{StatusPending, StatusRunning, StatusAwaitingApproval}, 3},
			{"completed", ws, Time{}, []string{StatusCompleted}, 0},
			{"other workspace", other, Time{}, nil, 0},
		} {
			if n, err := s.ExecutionCount(ctx, c.ws, c.since, c.statuses); err != nil || n != c.want {
				t.Fatalf("%s: %d %v, want %d", c.name, n, err, c.want)
			}
		}
	})
}
