package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

func TestLimitCounts(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		mustModel(t, s)
		ws, other := mustWorkspace(t, s, "a"), mustWorkspace(t, s, "b")
		if n, err := s.AgentCount(ctx, ws); err != nil || n != 0 {
			t.Fatalf("empty: %d %v", n, err)
		}
		a, err := s.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: "A", Type: "simple", Status: "active"}, &domain.AgentConfig{Model: "gpt-4o"}, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.AgentCreate(ctx, &domain.Agent{WorkspaceID: other, Name: "B", Type: "simple", Status: "active"}, &domain.AgentConfig{Model: "gpt-4o"}, ""); err != nil {
			t.Fatal(err)
		}
		if n, err := s.AgentCount(ctx, ws); err != nil || n != 1 {
			t.Fatalf("agents: %d %v", n, err)
		}
		for _, st := range []string{domain.StatusPending, domain.StatusPending, domain.StatusRunning} {
			x := &domain.Execution{WorkspaceID: ws, AgentID: a.ID, AgentVersionID: a.ActiveVersionID, Source: "api", Status: st,
				Input: domain.JSONObject{}, Metadata: domain.JSONObject{}, TimeoutMS: 1000}
			if err := s.ExecutionCreate(ctx, x, &domain.Trace{WorkspaceID: ws, AgentID: &a.ID, Name: "A"}); err != nil {
				t.Fatal(err)
			}
		}
		hourAgo := domain.Time{Time: time.Now().Add(-time.Hour)}
		for _, c := range []struct {
			name     string
			ws       string
			since    domain.Time
			statuses []string
			want     int
		}{
			{"all", ws, domain.Time{}, nil, 3},
			{"since an hour ago", ws, hourAgo, nil, 3},
			{"since the future", ws, domain.Time{Time: time.Now().Add(time.Hour)}, nil, 0},
			{"pending", ws, domain.Time{}, []string{domain.StatusPending}, 2},
			{"live", ws, hourAgo, []string{domain.StatusPending, domain.StatusRunning, domain.StatusAwaitingApproval}, 3},
			{"completed", ws, domain.Time{}, []string{domain.StatusCompleted}, 0},
			{"other workspace", other, domain.Time{}, nil, 0},
		} {
			if n, err := s.ExecutionCount(ctx, c.ws, c.since, c.statuses); err != nil || n != c.want {
				t.Fatalf("%s: %d %v, want %d", c.name, n, err, c.want)
			}
		}
	})
}

// TestPlanLockSerializesChecks: concurrent transactions that count and then insert, each
// under PlanLock, never overshoot (without the lock, PostgreSQL's concurrent transactions
// all count the same number and all insert). Another workspace is not held up.
func TestPlanLockSerializesChecks(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		mustModel(t, s)
		ws := mustWorkspace(t, s, "a")
		if err := s.PlanLock(ctx, ws); err == nil {
			t.Fatal("PlanLock outside a transaction must fail")
		}
		const limit, tries = 3, 12
		var wg sync.WaitGroup
		var created atomic.Int32
		for i := range tries {
			wg.Go(func() {
				err := s.InTx(ctx, func(tx *Store) error {
					if err := tx.PlanLock(ctx, ws); err != nil {
						return err
					}
					n, err := tx.AgentCount(ctx, ws)
					if err != nil || n >= limit {
						return err
					}
					time.Sleep(5 * time.Millisecond) // widen the window between count and insert
					_, err = tx.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: fmt.Sprintf("a%d", i), Type: "simple", Status: "active"}, &domain.AgentConfig{Model: "gpt-4o"}, "")
					if err == nil {
						created.Add(1)
					}
					return err
				})
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if n, _ := s.AgentCount(ctx, ws); n != limit || created.Load() != limit {
			t.Fatalf("%d agents (%d created), want %d", n, created.Load(), limit)
		}
	})
}

// TestRateTake: the shared bucket starts full, gives what it has (partially), takes tokens
// back up to its size, refills by the database's clock, holds under concurrent takes, and
// the sweep drops only buckets that are full again.
func TestRateTake(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		const slow = 0.001 // a token every 1000 s: no refill within the test
		take := func(key string, rate float64, burst, n int) (int, float64) {
			t.Helper()
			got, left, err := s.RateTake(ctx, key, rate, burst, n)
			if err != nil {
				t.Fatal(err)
			}
			return got, left
		}
		if got, left := take("k", slow, 5, 3); got != 3 || left < 1.99 || left > 2.01 {
			t.Fatalf("first take: %d, %v left", got, left)
		}
		if got, _ := take("k", slow, 5, 3); got != 2 {
			t.Fatalf("partial take: %d", got)
		}
		if got, left := take("k", slow, 5, 1); got != 0 || left >= 1 {
			t.Fatalf("empty bucket gave %d (%v left)", got, left)
		}
		if got, left := take("k", slow, 5, -2); got != 0 || left < 1.99 || left > 2.01 {
			t.Fatalf("give back: %d, %v left", got, left)
		}
		if _, left := take("k", slow, 5, -10); left > 5 {
			t.Fatalf("given back beyond the burst: %v", left)
		}
		if _, _, err := s.RateTake(ctx, "k", 0, 5, 1); err == nil {
			t.Fatal("rate 0 accepted")
		}
		// Refill: 2 tokens at 50 per second are back well within 200 ms.
		if got, _ := take("fast", 50, 2, 2); got != 2 {
			t.Fatalf("fast: %d", got)
		}
		time.Sleep(200 * time.Millisecond)
		if got, _ := take("fast", 50, 2, 5); got != 2 {
			t.Fatalf("after refill: %d", got)
		}
		// Concurrent takes never give more than the bucket holds.
		var wg sync.WaitGroup
		var total atomic.Int32
		for range 16 {
			wg.Go(func() {
				got, _, err := s.RateTake(ctx, "shared", slow, 10, 2)
				if err != nil {
					t.Error(err)
				}
				total.Add(int32(got))
			})
		}
		wg.Wait()
		if total.Load() != 10 {
			t.Fatalf("concurrent takes got %d tokens from a bucket of 10", total.Load())
		}
		// Sweep: "fast" is full again after 40 ms and "k" was given back to full; "shared" is not.
		time.Sleep(100 * time.Millisecond)
		if n, err := s.RateSweep(ctx); err != nil || n != 2 {
			t.Fatalf("sweep: %d %v", n, err)
		}
		if got, _ := take("shared", slow, 10, 1); got != 0 {
			t.Fatalf("the sweep emptied a bucket in use: %d", got)
		}
	})
}

// TestIsUniqueViolation: told apart by error code on both dialects, never by message.
func TestIsUniqueViolation(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		mustWorkspace(t, s, "dup")
		_, err := s.exec(ctx, "INSERT INTO workspaces (id, name, slug, created_at, updated_at) VALUES ($1, 'x', 'dup', $2, $2)", NewID(), domain.Now())
		if err == nil || !isUniqueViolation(err) {
			t.Fatalf("duplicate slug: %v", err)
		}
		if !isUniqueViolation(fmt.Errorf("wrapped: %w", err)) {
			t.Fatal("a wrapped violation is not recognised")
		}
		_, err = s.exec(ctx, "INSERT INTO workspaces (id, name, slug, created_at, updated_at) VALUES ($1, NULL, 'other', $2, $2)", NewID(), domain.Now())
		if err == nil || isUniqueViolation(err) {
			t.Fatalf("a NOT NULL violation taken for a unique one: %v", err)
		}
		if isUniqueViolation(errors.New("UNIQUE constraint failed: workspaces.slug (SQLSTATE 23505)")) {
			t.Fatal("matched on message text")
		}
		if _, err := s.WorkspaceCreate(ctx, &domain.Workspace{Name: "again", Slug: "dup"}); !errors.As(err, new(*ConflictError)) {
			t.Fatalf("WorkspaceCreate with a taken slug: %v", err)
		}
	})
}
