package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// insertWorkspace is a transaction body that records a workspace row (and counts its runs).
func insertWorkspace(ctx context.Context, slug string, runs *atomic.Int32) func(tx *Store) error {
	return func(tx *Store) error {
		runs.Add(1)
		_, err := tx.exec(ctx, "INSERT INTO workspaces (id, name, slug, created_at, updated_at) VALUES ($1, $1, $2, $3, $3)",
			NewID(), slug, domain.Now())
		return err
	}
}

func workspaceExists(t *testing.T, s *Store, slug string) bool {
	t.Helper()
	var n int
	if err := s.r.QueryRowContext(context.Background(), "SELECT count(*) FROM workspaces WHERE slug = $1", slug).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// TestTransactionsAreIsolated: concurrent transactions, some failing (an error, a unique
// violation, a panic), each run exactly once; the failures leave nothing behind and take
// nothing of the others with them. On SQLite they share commits, so this is what batching
// must preserve.
func TestTransactionsAreIsolated(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		mustWorkspace(t, s, "taken")
		const n = 60
		var runs [n]atomic.Int32
		errs := make([]error, n)
		panics := make([]any, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				defer func() { panics[i] = recover() }()
				slug := fmt.Sprintf("ws-%02d", i)
				errs[i] = s.InTx(ctx, func(tx *Store) error {
					if err := insertWorkspace(ctx, slug, &runs[i])(tx); err != nil {
						return err
					}
					switch i % 4 {
					case 1: // an expected error after a write
						return errors.New("refused")
					case 2: // a unique violation after a write: the 409 of an API call
						return insertWorkspace(ctx, "taken", new(atomic.Int32))(tx)
					case 3:
						panic("boom")
					}
					return nil
				})
			})
		}
		wg.Wait()
		for i := range n {
			if got := runs[i].Load(); got != 1 {
				t.Errorf("transaction %d ran %d times", i, got)
			}
			slug := fmt.Sprintf("ws-%02d", i)
			switch i % 4 {
			case 0:
				if errs[i] != nil || !workspaceExists(t, s, slug) {
					t.Errorf("transaction %d: %v, committed %v", i, errs[i], workspaceExists(t, s, slug))
				}
			case 1, 2:
				if errs[i] == nil || workspaceExists(t, s, slug) {
					t.Errorf("failed transaction %d: %v, committed %v", i, errs[i], workspaceExists(t, s, slug))
				}
			case 3:
				if panics[i] != "boom" || workspaceExists(t, s, slug) {
					t.Errorf("panicking transaction %d: recovered %v, committed %v", i, panics[i], workspaceExists(t, s, slug))
				}
			}
		}
		// The writer still works afterwards.
		if err := s.InTx(ctx, insertWorkspace(ctx, "after", new(atomic.Int32))); err != nil || !workspaceExists(t, s, "after") {
			t.Fatalf("after the batch: %v", err)
		}
	})
}

// TestSQLiteBatchSharesACommit: transactions queued behind a running one join its
// transaction (one commit for all), a failing one in the middle is rolled back alone, and
// every caller returns only once its writes are committed.
func TestSQLiteBatchSharesACommit(t *testing.T) {
	s, err := Open(context.Background(), dbs.SQLiteFile(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	started, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	gen := s.Generation()
	go func() {
		first <- s.InTx(ctx, func(tx *Store) error {
			if err := insertWorkspace(ctx, "first", new(atomic.Int32))(tx); err != nil {
				return err
			}
			close(started)
			<-release // hold the turn until the others queue up
			return nil
		})
	}()
	<-started
	results := make(chan string, 3)
	for _, slug := range []string{"a", "bad", "c"} {
		go func() {
			err := s.InTx(ctx, func(tx *Store) error {
				if err := insertWorkspace(ctx, slug, new(atomic.Int32))(tx); err != nil {
					return err
				}
				if slug == "bad" {
					return errors.New("refused")
				}
				return nil
			})
			// A caller that returned without error sees its row from any connection.
			results <- fmt.Sprintf("%s:%v:%v", slug, err, workspaceExists(t, s, slug))
		}()
	}
	waitFor(t, func() bool { return s.writer.waiting.Load() == 3 })
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for range 3 {
		got[<-results] = true
	}
	for _, want := range []string{"a:<nil>:true", "bad:refused:false", "c:<nil>:true"} {
		if !got[want] {
			t.Errorf("missing %q in %v", want, got)
		}
	}
	if !workspaceExists(t, s, "first") {
		t.Error("the first transaction was not committed")
	}
	if d := s.Generation() - gen; d != 1 {
		t.Errorf("the four transactions took %d commits, want 1", d)
	}
}

// TestSQLiteBatchBrokenBySQLite: when a failure ends SQLite's transaction itself (here a
// transaction body that rolls it back by hand, as SQLite does on SQLITE_FULL or IOERR), the
// transactions of the batch already done are reported failed, not committed.
func TestSQLiteBatchBrokenBySQLite(t *testing.T) {
	s, err := Open(context.Background(), "memory")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	started, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.InTx(ctx, func(tx *Store) error {
			if err := insertWorkspace(ctx, "first", new(atomic.Int32))(tx); err != nil {
				return err
			}
			close(started)
			<-release
			return nil
		})
	}()
	<-started
	breaker := make(chan error, 1)
	go func() {
		breaker <- s.InTx(ctx, func(tx *Store) error {
			_, err := tx.exec(ctx, "ROLLBACK")
			if err != nil {
				return err
			}
			return errors.New("gave up")
		})
	}()
	waitFor(t, func() bool { return s.writer.waiting.Load() == 1 })
	close(release)
	if err := <-breaker; err == nil || !strings.Contains(err.Error(), "gave up") {
		t.Fatalf("breaker: %v", err)
	}
	if err := <-first; err == nil {
		t.Fatal("the first transaction reported success though its writes were rolled back")
	}
	if workspaceExists(t, s, "first") {
		t.Fatal("rolled-back row is there")
	}
	if err := s.InTx(ctx, insertWorkspace(ctx, "after", new(atomic.Int32))); err != nil || !workspaceExists(t, s, "after") {
		t.Fatalf("after a broken batch: %v", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}
