package store

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

var testClaim = domain.Claim{Node: "node-a", Lease: time.Minute, SeqBlock: 512}

// leaseFixture creates a workspace, an agent and n pending executions.
func leaseFixture(t *testing.T, s *Store, n int) (string, []*domain.Execution) {
	t.Helper()
	ctx := context.Background()
	mustModel(t, s)
	ws := mustWorkspace(t, s, "a")
	a, err := s.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: "A", Type: "simple", Status: "active"}, &domain.AgentConfig{Model: "gpt-4o"}, "")
	if err != nil {
		t.Fatal(err)
	}
	var xs []*domain.Execution
	for range n {
		x := &domain.Execution{WorkspaceID: ws, AgentID: a.ID, AgentVersionID: a.ActiveVersionID, Source: "api", Status: domain.StatusPending,
			Input: domain.JSONObject{}, Metadata: domain.JSONObject{}, TimeoutMS: 1000}
		if err := s.ExecutionCreate(ctx, x, &domain.Trace{WorkspaceID: ws, Name: "A"}); err != nil {
			t.Fatal(err)
		}
		xs = append(xs, x)
	}
	return ws, xs
}

// TestLeases: a claim makes its node the owner with a lease, a new attempt and a block of
// frame ids; the heartbeat renews exactly the node's running rows; every write of a pass is
// fenced by its owner and attempt; a requeue gives the row back unless the pass reached a
// model call; expired leases (and rows without one) are listed for the rescuer.
func TestLeases(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws, xs := leaseFixture(t, s, 2)
		x, err := s.ExecutionClaim(ctx, testClaim)
		if err != nil || x == nil || x.ID != xs[0].ID {
			t.Fatalf("claim: %+v %v", x, err)
		}
		if x.OwnerNode == nil || *x.OwnerNode != "node-a" || x.LeaseExpiresAt == nil || x.Attempt != 1 || x.SeqReserved != 512 || x.ModelCalled {
			t.Fatalf("claimed row: owner %v lease %v attempt %d reserved %d called %v", x.OwnerNode, x.LeaseExpiresAt, x.Attempt, x.SeqReserved, x.ModelCalled)
		}
		if ms := *x.LeaseExpiresAt - time.Now().UnixMilli(); ms < 50_000 || ms > 70_000 {
			t.Fatalf("lease ends in %d ms, want about a minute", ms)
		}
		other := domain.Claim{Node: "node-b", Lease: time.Minute, SeqBlock: 512}
		y, err := s.ExecutionClaim(ctx, other)
		if err != nil || y == nil || y.ID != xs[1].ID {
			t.Fatalf("claim by b: %+v %v", y, err)
		}

		// The heartbeat renews a node's rows only, in one statement.
		renewed, err := s.ExecutionLeasesRenew(ctx, "node-a", 2*time.Minute)
		if err != nil || len(renewed) != 1 || renewed[0].ID != x.ID || renewed[0].Attempt != 1 {
			t.Fatalf("renew: %+v %v", renewed, err)
		}
		got, _ := s.ExecutionGet(ctx, ws, x.ID)
		if ms := *got.LeaseExpiresAt - time.Now().UnixMilli(); ms < 110_000 {
			t.Fatalf("renewed lease ends in %d ms", ms)
		}

		// Fenced writes: the wrong node or attempt changes nothing.
		a1 := domain.Owner{Node: "node-a", Attempt: 1}
		if ok, err := s.ExecutionMarkModelCalled(ctx, x.ID, domain.Owner{Node: "node-b", Attempt: 1}); err != nil || ok {
			t.Fatalf("mark by another node: %v %v", ok, err)
		}
		if ok, err := s.ExecutionReserveSeqs(ctx, x.ID, domain.Owner{Node: "node-a", Attempt: 2}, 1024); err != nil || ok {
			t.Fatalf("reserve by another attempt: %v %v", ok, err)
		}
		if ok, err := s.ExecutionReserveSeqs(ctx, x.ID, a1, 1024); err != nil || !ok {
			t.Fatalf("reserve: %v %v", ok, err)
		}
		_, err = s.ExecutionTransition(ctx, ws, x.ID, domain.StatusCompleted, domain.ExecutionPatch{Owner: &domain.Owner{Node: "node-b", Attempt: 1}})
		var te *TransitionError
		if !errors.As(err, &te) || !te.Fenced || te.From != domain.StatusRunning {
			t.Fatalf("completion by a pass that does not hold the row: %v", err)
		}

		// A pass that never reached a model call goes back to the queue; the next claim is a
		// new attempt whose frame ids start above the old reservation.
		seq := 7
		if ok, err := s.ExecutionRequeue(ctx, ws, x.ID, &a1, &seq); err != nil || !ok {
			t.Fatalf("requeue: %v %v", ok, err)
		}
		got, _ = s.ExecutionGet(ctx, ws, x.ID)
		if got.Status != domain.StatusPending || got.OwnerNode != nil || got.LeaseExpiresAt != nil || got.SeqReserved != 7 {
			t.Fatalf("requeued row: %+v", got)
		}
		x2, err := s.ExecutionClaim(ctx, testClaim)
		if err != nil || x2 == nil || x2.ID != x.ID || x2.Attempt != 2 || x2.SeqReserved != 7+512 {
			t.Fatalf("second claim: %+v %v", x2, err)
		}
		a2 := domain.Owner{Node: "node-a", Attempt: 2}
		if ok, _ := s.ExecutionMarkModelCalled(ctx, x.ID, a1); ok {
			t.Fatal("the first pass marked the second's row")
		}
		if ok, err := s.ExecutionMarkModelCalled(ctx, x.ID, a2); err != nil || !ok {
			t.Fatalf("mark: %v %v", ok, err)
		}
		if ok, _ := s.ExecutionRequeue(ctx, ws, x.ID, &a2, nil); ok {
			t.Fatal("requeued a pass that reached a model call")
		}

		// Leaving running ends the lease; the used ids replace the reservation.
		used := 9
		done, err := s.ExecutionTransition(ctx, ws, x.ID, domain.StatusCompleted, domain.ExecutionPatch{Owner: &a2, SeqUsed: &used})
		if err != nil || done.OwnerNode != nil || done.LeaseExpiresAt != nil || done.SeqReserved != 9 {
			t.Fatalf("complete: %+v %v", done, err)
		}

		// Expired leases: b's run once its lease ran out; a row without a lease at once.
		if xs, err := s.ExecutionsExpired(ctx, 10); err != nil || len(xs) != 0 {
			t.Fatalf("expired before any lease ran out: %d %v", len(xs), err)
		}
		if _, err := s.ExecutionLeasesRenew(ctx, "node-b", time.Millisecond); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		exp, err := s.ExecutionsExpired(ctx, 10)
		if err != nil || len(exp) != 1 || exp[0].ID != y.ID {
			t.Fatalf("expired: %+v %v", exp, err)
		}
		// Closing a run of a stopped node is allowed only once its lease expired.
		attempt := 1
		if _, err := s.ExecutionTransition(ctx, ws, y.ID, domain.StatusCancelled, domain.ExecutionPatch{From: domain.StatusRunning, Attempt: &attempt, LeaseExpired: true}); err != nil {
			t.Fatalf("close an expired run: %v", err)
		}
	})
}

// TestClaimsRace: concurrent claimers take every pending row exactly once.
func TestClaimsRace(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		_, xs := leaseFixture(t, s, 40)
		var mu sync.Mutex
		seen := map[string]int{}
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				c := domain.Claim{Node: "node-" + string(rune('a'+w)), Lease: time.Minute, SeqBlock: 512}
				for {
					x, err := s.ExecutionClaim(ctx, c)
					if err != nil {
						t.Error(err)
						return
					}
					if x == nil {
						return
					}
					mu.Lock()
					seen[x.ID]++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(seen) != len(xs) {
			t.Fatalf("claimed %d of %d", len(seen), len(xs))
		}
		for id, n := range seen {
			if n != 1 {
				t.Fatalf("%s claimed %d times", id, n)
			}
		}
	})
}

// TestSessionLeaseRelease: a rescue releases the session whatever it is, and only the
// execution that holds it.
func TestSessionLeaseRelease(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws, xs := leaseFixture(t, s, 1)
		sess, err := s.ChatSessionCreate(ctx, &domain.ChatSession{WorkspaceID: ws, AgentID: xs[0].AgentID, Metadata: domain.JSONObject{}})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.ChatSessionLock(ctx, ws, sess.ID, xs[0].ID); err != nil {
			t.Fatal(err)
		}
		if err := s.ChatSessionUnlockFor(ctx, ws, "someone-else"); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.ChatSessionGet(ctx, ws, sess.ID); got.ActiveExecutionID == nil {
			t.Fatal("released by another execution")
		}
		if err := s.ChatSessionUnlockFor(ctx, ws, xs[0].ID); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.ChatSessionGet(ctx, ws, sess.ID); got.ActiveExecutionID != nil {
			t.Fatal("not released")
		}
	})
}

func TestChannelFor(t *testing.T) {
	for schema, want := range map[string]string{"": "agentplane", "public": "agentplane", "e2e_ABC-1": "agentplane_e2e_abc1"} {
		if got := domain.ChannelFor(schema); got != want {
			t.Errorf("ChannelFor(%q) = %q, want %q", schema, got, want)
		}
	}
}

// BenchmarkMarkModelCalled measures the statement each pass makes right before its first
// model call, on a SQLite file and (with TEST_DATABASE_URL) PostgreSQL, one caller:
//
//	TEST_DATABASE_URL=postgres://… go test ./internal/store -run '^$' -bench MarkModelCalled
func BenchmarkMarkModelCalled(b *testing.B) {
	ctx := context.Background()
	run := func(b *testing.B, s *Store) {
		if err := s.LLMModelUpsert(ctx, &domain.LLMModel{ID: "gpt-4o", Provider: "openai", Name: "GPT-4o", ContextWindow: 128000,
			Capabilities: domain.Strings{"chat"}}); err != nil {
			b.Fatal(err)
		}
		ws := NewID()
		if _, err := s.WorkspaceCreate(ctx, &domain.Workspace{ID: ws, Name: "b", Slug: "b" + ws[:8]}); err != nil {
			b.Fatal(err)
		}
		a, err := s.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: "A", Type: "simple", Status: "active"}, &domain.AgentConfig{Model: "gpt-4o"}, "")
		if err != nil {
			b.Fatal(err)
		}
		xs := make([]*domain.Execution, b.N)
		for i := range xs {
			c := testClaim
			xs[i] = &domain.Execution{WorkspaceID: ws, AgentID: a.ID, AgentVersionID: a.ActiveVersionID, Source: "api", Status: domain.StatusRunning,
				Input: domain.JSONObject{}, Metadata: domain.JSONObject{}, TimeoutMS: 1000, Claim: &c}
			if err := s.ExecutionCreate(ctx, xs[i], &domain.Trace{WorkspaceID: ws, Name: "A"}); err != nil {
				b.Fatal(err)
			}
		}
		b.ResetTimer()
		for i := range b.N {
			if ok, err := s.ExecutionMarkModelCalled(ctx, xs[i].ID, domain.Owner{Node: testClaim.Node, Attempt: 1}); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	}
	b.Run("sqlite", func(b *testing.B) { run(b, openBenchStore(b, "sqlite", dbs.SQLiteFile(b))) })
	b.Run("postgres", func(b *testing.B) { run(b, openTestPostgres(b)) })
}
