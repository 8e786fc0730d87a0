package store

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// TestUsageBreakdown: the usage rollups kept by the triggers of migration 00032 give, per
// model and per end user, the sums of the runs that ended (each counted once, at its end),
// and nothing of the runs still going.
func TestUsageBreakdown(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		mustModel(t, s)
		ws, other := mustWorkspace(t, s, "a"), mustWorkspace(t, s, "b")
		var agents []*domain.Agent
		for _, n := range []string{"A", "B"} {
			a, err := s.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: n, Type: "simple", Status: "active"}, &domain.AgentConfig{Model: "gpt-4o"}, "")
			if err != nil {
				t.Fatal(err)
			}
			agents = append(agents, a)
		}
		models := []string{"gpt-4o", "claude-sonnet-4", ""}
		users := []string{"u1", "u2", ""}
		type sums struct {
			runs, errors, pt, ct int64
			cost                 float64
		}
		want := map[string]map[string]*sums{} // "dimension/agent" -> key -> sums
		add := func(dim, agent, key string, status string, pt, ct int64, cost float64) {
			for _, a := range []string{agent, ""} {
				m := want[dim+"/"+a]
				if m == nil {
					m = map[string]*sums{}
					want[dim+"/"+a] = m
				}
				g := m[key]
				if g == nil {
					g = &sums{}
					m[key] = g
				}
				g.runs++
				if status == domain.StatusFailed {
					g.errors++
				}
				g.pt, g.ct, g.cost = g.pt+pt, g.ct+ct, g.cost+cost
			}
		}
		for i := range 30 {
			a := agents[i%2]
			x := &domain.Execution{WorkspaceID: ws, AgentID: a.ID, AgentVersionID: a.ActiveVersionID, Source: "api", Status: domain.StatusPending,
				Input: domain.JSONObject{}, Metadata: domain.JSONObject{}, TimeoutMS: 1000}
			if u := users[i%3]; u != "" {
				x.EndUserID = &u
			}
			if err := s.ExecutionCreate(ctx, x, &domain.Trace{WorkspaceID: ws, AgentID: &a.ID, Name: "A"}); err != nil {
				t.Fatal(err)
			}
			switch i % 5 {
			case 4: // still pending: not counted
				continue
			case 3: // cancelled before it ran: no model, no tokens
				if _, err := s.ExecutionTransition(ctx, ws, x.ID, domain.StatusCancelled, domain.ExecutionPatch{}); err != nil {
					t.Fatal(err)
				}
				add(domain.UsageByModel, a.ID, "", domain.StatusCancelled, 0, 0, 0)
				if x.EndUserID != nil {
					add(domain.UsageByEndUser, a.ID, *x.EndUserID, domain.StatusCancelled, 0, 0, 0)
				}
				continue
			}
			if _, err := s.ExecutionTransition(ctx, ws, x.ID, domain.StatusRunning, domain.ExecutionPatch{}); err != nil {
				t.Fatal(err)
			}
			if i%7 == 0 { // running: not counted yet
				continue
			}
			status := domain.StatusCompleted
			if i%5 == 2 {
				status = domain.StatusFailed
			}
			m, pt, ct, cost := models[i%3], int64(10+i), int64(i), 0.001*float64(i)
			p := domain.ExecutionPatch{Usage: &domain.TokenUsage{PromptTokens: int(pt), CompletionTokens: int(ct)}, Cost: &cost}
			if m != "" {
				p.Model = &m
			}
			if _, err := s.ExecutionTransition(ctx, ws, x.ID, status, p); err != nil {
				t.Fatal(err)
			}
			add(domain.UsageByModel, a.ID, m, status, pt, ct, cost)
			if x.EndUserID != nil {
				add(domain.UsageByEndUser, a.ID, *x.EndUserID, status, pt, ct, cost)
			}
		}

		now := domain.Now()
		for _, dim := range domain.UsageDimensions {
			for _, agent := range []string{"", agents[0].ID, agents[1].ID} {
				for _, period := range []time.Duration{time.Hour, 24 * time.Hour} {
					t.Run(fmt.Sprintf("%s/agent=%q/%v", dim, agent, period), func(t *testing.T) {
						got, total, err := s.UsageBreakdown(ctx, ws, domain.UsageFilter{Dimension: dim, AgentID: agent,
							From: domain.Time{Time: now.Add(-time.Hour)}, To: domain.Time{Time: now.Add(time.Minute)}, Period: period, Limit: 100})
						if err != nil {
							t.Fatal(err)
						}
						exp := want[dim+"/"+agent]
						if total != len(exp) || len(got) != len(exp) {
							t.Fatalf("%d groups (total %d), want %d: %+v", len(got), total, len(exp), got)
						}
						for i, g := range got {
							w := exp[g.Key]
							if w == nil || g.Runs != w.runs || g.Errors != w.errors || int64(g.TokenUsage.PromptTokens) != w.pt ||
								int64(g.TokenUsage.CompletionTokens) != w.ct || g.TokenUsage.TotalTokens != int(w.pt+w.ct) ||
								math.Abs(g.Cost-w.cost) > 1e-9 {
								t.Fatalf("group %q: %+v, want %+v", g.Key, g, w)
							}
							if i > 0 && got[i-1].Cost < g.Cost {
								t.Fatalf("not the costliest first: %+v", got)
							}
						}
					})
				}
			}
		}
		t.Run("limit", func(t *testing.T) {
			got, total, err := s.UsageBreakdown(ctx, ws, domain.UsageFilter{Dimension: domain.UsageByModel, From: domain.Time{Time: now.Add(-time.Hour)},
				To: domain.Time{Time: now.Add(time.Minute)}, Period: time.Hour, Limit: 1})
			if err != nil || len(got) != 1 || total != 3 {
				t.Fatalf("%+v %d %v", got, total, err)
			}
		})
		t.Run("other workspace and window", func(t *testing.T) {
			got, _, err := s.UsageBreakdown(ctx, other, domain.UsageFilter{Dimension: domain.UsageByModel, From: domain.Time{Time: now.Add(-time.Hour)},
				To: domain.Time{Time: now.Add(time.Minute)}, Period: time.Hour})
			if err != nil || len(got) != 0 {
				t.Fatalf("other workspace: %+v %v", got, err)
			}
			got, _, err = s.UsageBreakdown(ctx, ws, domain.UsageFilter{Dimension: domain.UsageByModel, From: domain.Time{Time: now.Add(-48 * time.Hour)},
				To: domain.Time{Time: now.Add(-47 * time.Hour)}, Period: time.Hour})
			if err != nil || len(got) != 0 {
				t.Fatalf("an empty window: %+v %v", got, err)
			}
		})
	})
}
