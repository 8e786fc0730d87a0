package claimloop

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// queue is a table of due items in memory: Claim takes the lowest, up to limit.
type queue struct {
	mu      sync.Mutex
	due     []int
	claims  int
	running atomic.Int32
	most    atomic.Int32
	done    []int
	hold    chan struct{} // attempts wait on it when set
}

func (q *queue) add(items ...int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.due = append(q.due, items...)
}

func (q *queue) claim(_ context.Context, limit int) ([]int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.claims++
	n := min(limit, len(q.due))
	got := q.due[:n:n]
	q.due = q.due[n:]
	return got, nil
}

func (q *queue) attempt(ctx context.Context, it int) {
	n := q.running.Add(1)
	defer q.running.Add(-1)
	for {
		m := q.most.Load()
		if n <= m || q.most.CompareAndSwap(m, n) {
			break
		}
	}
	if q.hold != nil {
		select {
		case <-q.hold:
		case <-ctx.Done():
			return // cancelled: not done
		}
	}
	q.mu.Lock()
	q.done = append(q.done, it)
	q.mu.Unlock()
}

func (q *queue) doneCount() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.done)
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestLoop: a nudge makes an idle loop look long before its poll; it never runs more
// attempts than it has slots, and takes every due item once; Stop lets attempts in progress
// finish within its grace and cancels the rest after it, and calling it again (or Start
// after it) does nothing.
func TestLoop(t *testing.T) {
	t.Run("nudge, slots", func(t *testing.T) {
		q := &queue{hold: make(chan struct{})}
		l := New(Config[int]{Slots: 2, Poll: time.Hour, Claim: q.claim, Attempt: q.attempt, What: "items"})
		l.Start()
		l.Start()
		defer l.Stop(context.Background())
		waitFor(t, "the first look", func() bool { q.mu.Lock(); defer q.mu.Unlock(); return q.claims == 1 })
		q.add(1, 2, 3, 4, 5)
		l.Nudge()
		waitFor(t, "two attempts", func() bool { return q.running.Load() == 2 })
		time.Sleep(30 * time.Millisecond)
		if q.most.Load() != 2 {
			t.Fatalf("%d attempts at once, want at most 2", q.most.Load())
		}
		close(q.hold)
		waitFor(t, "every item", func() bool { return q.doneCount() == 5 })
		if q.most.Load() > 2 {
			t.Fatalf("%d attempts at once, want at most 2", q.most.Load())
		}
	})
	t.Run("poll", func(t *testing.T) {
		q := &queue{}
		l := New(Config[int]{Slots: 1, Poll: 10 * time.Millisecond, Claim: q.claim, Attempt: q.attempt})
		var looks atomic.Int32
		l.cfg.BeforeLook = func() { looks.Add(1) }
		l.Start()
		q.add(7)
		waitFor(t, "the polled item", func() bool { return q.doneCount() == 1 })
		l.Stop(context.Background())
		if looks.Load() < 2 {
			t.Fatalf("BeforeLook ran %d times, want once a look", looks.Load())
		}
	})
	t.Run("stop grace", func(t *testing.T) {
		q := &queue{hold: make(chan struct{})}
		l := New(Config[int]{Slots: 3, Poll: time.Hour, Claim: q.claim, Attempt: q.attempt})
		q.add(1, 2)
		l.Start()
		waitFor(t, "two attempts", func() bool { return q.running.Load() == 2 })
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		l.Stop(ctx)
		if q.running.Load() != 0 || q.doneCount() != 0 || l.Context().Err() == nil {
			t.Fatal("Stop returned with attempts running, or without cancelling them after its grace")
		}
		l.Stop(context.Background())
		l.Start() // after Stop: nothing
		q.add(3)
		time.Sleep(30 * time.Millisecond)
		if q.doneCount() != 0 {
			t.Fatal("a stopped loop attempted an item")
		}
	})
	t.Run("run due", func(t *testing.T) {
		q := &queue{}
		l := New(Config[int]{Slots: 1, Poll: time.Hour, Claim: q.claim, Attempt: q.attempt})
		for i := range 250 {
			q.add(i)
		}
		n, err := l.RunDue(context.Background(), 100)
		if err != nil || n != 250 || q.doneCount() != 250 || q.claims != 3 {
			t.Fatalf("RunDue = %d, %v after %d claims; want 250 in 3 claims", n, err, q.claims)
		}
		l.Stop(context.Background())
	})
}
