package store

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// TestChatTurnClaim: a chat turn's key is recorded in the turn's own transaction; a second
// claim of the key (also a concurrent one, waiting for the first to commit) records nothing
// and reports the first turn; a rolled-back claim leaves the key free.
func TestChatTurnClaim(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "a")
		ref := domain.ChatTurnRef{ExecutionID: "x1", UserMessageID: "m1"}
		claimed := make(chan struct{})
		first := make(chan error, 1)
		go func() {
			first <- s.InTx(ctx, func(tx *Store) error {
				if err := tx.ChatTurnClaim(ctx, ws, "turn", "h1", ref); err != nil {
					return err
				}
				close(claimed)
				time.Sleep(50 * time.Millisecond) // the second claim starts meanwhile
				return nil
			})
		}()
		<-claimed
		err := s.InTx(ctx, func(tx *Store) error {
			return tx.ChatTurnClaim(ctx, ws, "turn", "h1", domain.ChatTurnRef{ExecutionID: "x2", UserMessageID: "m2"})
		})
		if err := <-first; err != nil {
			t.Fatal(err)
		}
		var used *IdempotencyUsedError
		if !errors.As(err, &used) {
			t.Fatalf("second claim: %v", err)
		}
		if got, ok := used.Record.ChatTurn(); !ok || *got != ref || used.Record.RequestHash != "h1" {
			t.Fatalf("second claim found %+v", used.Record)
		}
		rec, err := s.IdempotencyGet(ctx, ws, "turn")
		if err != nil || rec == nil {
			t.Fatalf("get: %+v %v", rec, err)
		}
		if got, ok := rec.ChatTurn(); !ok || *got != ref {
			t.Fatalf("stored turn: %+v", rec)
		}
		// A generic record is not a chat turn.
		if _, _, err := s.IdempotencyBegin(ctx, ws, "plain", "h", domain.IdempotencyLease); err != nil {
			t.Fatal(err)
		}
		if rec, _ := s.IdempotencyGet(ctx, ws, "plain"); rec == nil {
			t.Fatal("plain record missing")
		} else if _, ok := rec.ChatTurn(); ok {
			t.Fatal("an in-flight generic record reads as a chat turn")
		}
		// Rolled back with its turn: the key is free again.
		boom := errors.New("turn refused")
		if err := s.InTx(ctx, func(tx *Store) error {
			if err := tx.ChatTurnClaim(ctx, ws, "refused", "h", ref); err != nil {
				return err
			}
			return boom
		}); !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if rec, err := s.IdempotencyGet(ctx, ws, "refused"); rec != nil || err != nil {
			t.Fatalf("rolled-back claim left %+v %v", rec, err)
		}
		// An expired record is replaced.
		if _, err := s.exec(ctx, "UPDATE idempotency_keys SET created_at = $1 WHERE key = 'turn'", domain.Time{Time: time.Now().Add(-domain.IdempotencyTTL - time.Minute)}); err != nil {
			t.Fatal(err)
		}
		if rec, _ := s.IdempotencyGet(ctx, ws, "turn"); rec != nil {
			t.Fatalf("expired record still answers: %+v", rec)
		}
		if err := s.InTx(ctx, func(tx *Store) error { return tx.ChatTurnClaim(ctx, ws, "turn", "h9", ref) }); err != nil {
			t.Fatalf("claim of an expired key: %v", err)
		}
	})
}

func TestIdempotencyRecords(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "a")
		c, prev, err := s.IdempotencyBegin(ctx, ws, "k", "h1", domain.IdempotencyLease)
		if err != nil || prev != nil || c == nil || c.TakenOver {
			t.Fatalf("first claim: %+v %+v %v", c, prev, err)
		}
		c2, prev, err := s.IdempotencyBegin(ctx, ws, "k", "h1", domain.IdempotencyLease)
		if err != nil || c2 != nil || prev == nil || prev.Status != 0 || !prev.LockedUntil.After(time.Now()) {
			t.Fatalf("in-flight claim: %+v %+v %v", c2, prev, err)
		}
		if ok, err := s.IdempotencyFinish(ctx, c, 201, `{"data":1}`); err != nil || !ok {
			t.Fatalf("finish: %v %v", ok, err)
		}
		_, prev, _ = s.IdempotencyBegin(ctx, ws, "k", "h2", domain.IdempotencyLease)
		if prev == nil || prev.RequestHash != "h1" || prev.Status != 201 || prev.Response != `{"data":1}` {
			t.Fatalf("replay record: %+v", prev)
		}
		// Keys are per workspace.
		other := mustWorkspace(t, s, "b")
		if c, prev, _ := s.IdempotencyBegin(ctx, other, "k", "h1", domain.IdempotencyLease); prev != nil || c == nil {
			t.Fatal("idempotency key shared across workspaces")
		}
		// Released: the key is free again.
		c, _, _ = s.IdempotencyBegin(ctx, ws, "free", "h", domain.IdempotencyLease)
		if err := s.IdempotencyRelease(ctx, c); err != nil {
			t.Fatal(err)
		}
		if c, prev, err := s.IdempotencyBegin(ctx, ws, "free", "h", domain.IdempotencyLease); c == nil || prev != nil || err != nil {
			t.Fatalf("claim after release: %+v %+v %v", c, prev, err)
		}
	})
}

// expireLease makes the in-progress record of key look as left by a process that died: its
// lease ran out a second ago.
func expireLease(t *testing.T, s *Store, ws, key string) {
	t.Helper()
	if _, err := s.exec(context.Background(), "UPDATE idempotency_keys SET locked_until = $1 WHERE workspace_id = $2 AND key = $3",
		time.Now().Add(-time.Second).UnixMilli(), ws, key); err != nil {
		t.Fatal(err)
	}
}

// TestIdempotencyLease: a key in progress is held while its lease is renewed; once the lease
// ran out (its process died), a retry of the same request takes it over, with the execution
// the first one created, and the first one's claim can no longer change the record.
func TestIdempotencyLease(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "a")
		dead, _, err := s.IdempotencyBegin(ctx, ws, "k", "h", domain.IdempotencyLease)
		if err != nil || dead == nil {
			t.Fatal(err)
		}
		if ok, err := s.IdempotencyRenew(ctx, dead, domain.IdempotencyLease); !ok || err != nil {
			t.Fatalf("renew: %v %v", ok, err)
		}
		if err := s.InTx(ctx, func(tx *Store) error { return tx.IdempotencyLinkExecution(ctx, dead, "x1") }); err != nil {
			t.Fatal(err)
		}
		expireLease(t, s, ws, "k")
		// Another body does not take a key over: it is still a 409 for the caller.
		if c, prev, err := s.IdempotencyBegin(ctx, ws, "k", "other", domain.IdempotencyLease); c != nil || prev == nil || err != nil {
			t.Fatalf("another body took the key over: %+v %+v %v", c, prev, err)
		}
		retry, prev, err := s.IdempotencyBegin(ctx, ws, "k", "h", domain.IdempotencyLease)
		if err != nil || prev != nil || retry == nil || !retry.TakenOver || retry.ExecutionID != "x1" || retry.Token == dead.Token {
			t.Fatalf("take-over: %+v %+v %v", retry, prev, err)
		}
		// The new lease holds against a third request.
		if c, prev, _ := s.IdempotencyBegin(ctx, ws, "k", "h", domain.IdempotencyLease); c != nil || prev == nil || prev.Status != 0 {
			t.Fatalf("a third request claimed a live lease: %+v %+v", c, prev)
		}
		// The dead process, were it to wake, changes nothing.
		if ok, err := s.IdempotencyRenew(ctx, dead, domain.IdempotencyLease); ok || err != nil {
			t.Fatalf("stale renew: %v %v", ok, err)
		}
		var ce *ConflictError
		if err := s.InTx(ctx, func(tx *Store) error { return tx.IdempotencyLinkExecution(ctx, dead, "x2") }); !errors.As(err, &ce) {
			t.Fatalf("stale link: %v", err)
		}
		if ok, err := s.IdempotencyFinish(ctx, dead, 200, "stale"); ok || err != nil {
			t.Fatalf("stale finish: %v %v", ok, err)
		}
		if err := s.IdempotencyRelease(ctx, dead); err != nil {
			t.Fatal(err)
		}
		rec, _ := s.IdempotencyGet(ctx, ws, "k")
		if rec == nil || rec.Status != 0 || rec.ExecutionID != "x1" {
			t.Fatalf("record after the stale calls: %+v", rec)
		}
		// Released with an execution: kept, its lease ended, so a retry answers from it at once.
		if err := s.IdempotencyRelease(ctx, retry); err != nil {
			t.Fatal(err)
		}
		again, _, err := s.IdempotencyBegin(ctx, ws, "k", "h", domain.IdempotencyLease)
		if err != nil || again == nil || !again.TakenOver || again.ExecutionID != "x1" {
			t.Fatalf("claim after a release with an execution: %+v %v", again, err)
		}
		if ok, err := s.IdempotencyFinish(ctx, again, 200, "done"); !ok || err != nil {
			t.Fatalf("finish: %v %v", ok, err)
		}
		// A finished record is never taken over, however old its lease.
		expireLease(t, s, ws, "k")
		if c, prev, _ := s.IdempotencyBegin(ctx, ws, "k", "h", domain.IdempotencyLease); c != nil || prev == nil || prev.Response != "done" {
			t.Fatalf("finished record: %+v %+v", c, prev)
		}
		// A dead request that created nothing: the retry runs it afresh.
		_, _, _ = s.IdempotencyBegin(ctx, ws, "bare", "h", domain.IdempotencyLease)
		expireLease(t, s, ws, "bare")
		if c, _, err := s.IdempotencyBegin(ctx, ws, "bare", "h", domain.IdempotencyLease); err != nil || c == nil || !c.TakenOver || c.ExecutionID != "" {
			t.Fatalf("bare take-over: %+v %v", c, err)
		}
	})
}

// TestIdempotencyConcurrentClaims: many requests with one key at once, fresh and after an
// expired lease, with requests releasing the key meanwhile: exactly one claim at a time,
// every other request finds a record, and none gets an error.
func TestIdempotencyConcurrentClaims(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "a")
		race := func(key string) (claims []*domain.IdempotencyClaim) {
			var mu sync.Mutex
			var wg sync.WaitGroup
			for range 16 {
				wg.Go(func() {
					c, prev, err := s.IdempotencyBegin(ctx, ws, key, "h", domain.IdempotencyLease)
					if err != nil || (c == nil) == (prev == nil) {
						t.Errorf("begin: %+v %+v %v", c, prev, err)
						return
					}
					mu.Lock()
					defer mu.Unlock()
					if c != nil {
						claims = append(claims, c)
					}
				})
			}
			wg.Wait()
			return claims
		}
		if c := race("fresh"); len(c) != 1 {
			t.Fatalf("%d claims of a fresh key", len(c))
		}
		expireLease(t, s, ws, "fresh")
		if c := race("fresh"); len(c) != 1 || !c[0].TakenOver {
			t.Fatalf("take-overs of an expired lease: %+v", c)
		}
		// Claims racing with releases: whoever holds the key releases it at once.
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 10 {
					c, prev, err := s.IdempotencyBegin(ctx, ws, "churn", "h", domain.IdempotencyLease)
					if err != nil || (c == nil) == (prev == nil) {
						t.Errorf("begin: %+v %+v %v", c, prev, err)
						return
					}
					if c != nil {
						if err := s.IdempotencyRelease(ctx, c); err != nil {
							t.Error(err)
							return
						}
					}
				}
			})
		}
		wg.Wait()
	})
}
