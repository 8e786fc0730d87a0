package runtime

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testQueue is a queue in memory for a producer: claim takes the oldest id, or fails while
// fail is set.
type testQueue struct {
	mu   sync.Mutex
	ids  []string
	ran  []string
	fail error
}

func (q *testQueue) claim() (*claimed, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.fail != nil {
		return nil, q.fail
	}
	if len(q.ids) == 0 {
		return nil, nil
	}
	id := q.ids[0]
	q.ids = q.ids[1:]
	return &claimed{x: &domain.Execution{ID: id}}, nil
}

func (q *testQueue) run(c *claimed) {
	q.mu.Lock()
	q.ran = append(q.ran, c.x.ID)
	q.mu.Unlock()
}

func (q *testQueue) add(ids ...string) {
	q.mu.Lock()
	q.ids = append(q.ids, ids...)
	q.mu.Unlock()
}

func (q *testQueue) count() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.ran)
}

// TestProducer: the workers take every queued run once, wait when the queue is empty until
// poked (not polling: the poll interval is an hour here), retry a failed claim after the
// poll interval, and stop at the drain.
func TestProducer(t *testing.T) {
	t.Parallel()
	start := func(t *testing.T, q *testQueue, poll time.Duration) *producer {
		p := newProducer(producerConfig{Workers: 3, Poll: poll, Claim: q.claim, Run: q.run, Logger: quiet()})
		var wg sync.WaitGroup
		p.start(&wg)
		t.Cleanup(func() { p.drain(); wg.Wait() })
		return p
	}
	t.Run("runs what is queued, once each", func(t *testing.T) {
		q := &testQueue{ids: []string{"a", "b", "c", "d", "e"}}
		start(t, q, time.Hour)
		waitFor(t, "five runs", func() bool { return q.count() == 5 })
	})
	t.Run("an idle worker wakes when poked", func(t *testing.T) {
		q := &testQueue{}
		p := start(t, q, time.Hour)
		waitFor(t, "idle workers", func() bool { return p.idleWorkers() == 3 })
		q.add("x")
		p.poke()
		waitFor(t, "the run", func() bool { return q.count() == 1 })
	})
	t.Run("a failed claim is tried again after the poll interval", func(t *testing.T) {
		q := &testQueue{ids: []string{"a"}, fail: errors.New("database away")}
		start(t, q, 10*time.Millisecond)
		time.Sleep(30 * time.Millisecond)
		q.mu.Lock()
		q.fail = nil
		q.mu.Unlock()
		waitFor(t, "the run", func() bool { return q.count() == 1 })
	})
	t.Run("drained, it claims nothing more", func(t *testing.T) {
		q := &testQueue{}
		p := newProducer(producerConfig{Workers: 2, Poll: time.Millisecond, Claim: q.claim, Run: q.run, Logger: quiet()})
		var wg sync.WaitGroup
		p.start(&wg)
		p.drain()
		p.drain() // twice is fine
		wg.Wait()
		q.add("late")
		p.poke()
		time.Sleep(10 * time.Millisecond)
		if q.count() != 0 {
			t.Fatalf("ran %d after the drain", q.count())
		}
	})
}

// flipLock is a leader lock that answers what lead says.
type flipLock struct {
	lead     atomic.Bool
	released atomic.Bool
}

func (l *flipLock) hold(context.Context) (bool, error) { return l.lead.Load(), nil }
func (l *flipLock) release()                           { l.released.Store(true) }

// TestElector: the leader's work runs only while this node wins the election, Leading says
// so, and resigning releases the lock.
func TestElector(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	el := newElector(electorConfig{Interval: 2 * time.Millisecond, Lead: func(context.Context) { runs.Add(1) }, Logger: quiet()})
	lock := &flipLock{}
	t.Run("a node that loses does not lead", func(t *testing.T) {
		if el.elect(context.Background(), lock) || el.isLeading() {
			t.Fatal("elected without the lock")
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { el.run(ctx); close(done) }()
	t.Run("it leads once it holds the lock, and works", func(t *testing.T) {
		time.Sleep(10 * time.Millisecond)
		if runs.Load() != 0 {
			t.Fatalf("worked %d times without leading", runs.Load())
		}
		lock.lead.Store(true)
		waitFor(t, "leading", el.isLeading)
		waitFor(t, "the leader's work", func() bool { return runs.Load() > 0 })
	})
	t.Run("it stops leading when it loses the lock", func(t *testing.T) {
		lock.lead.Store(false)
		waitFor(t, "not leading", func() bool { return !el.isLeading() })
	})
	cancel()
	<-done
	t.Run("resigning releases the lock", func(t *testing.T) {
		el.resign()
		if !lock.released.Load() || el.isLeading() {
			t.Fatal("the lock was not released")
		}
	})
}

// TestRescuer: a run whose lease expired is queued again when it never reached a model
// call, failed as interrupted otherwise; a run whose lease holds is left alone; each rescue
// is told once.
func TestRescuer(t *testing.T) {
	t.Parallel()
	forEachEngineStore(t, func(t *testing.T, st *store.Store, a *domain.Agent) {
		ctx := context.Background()
		running := func(called bool, lease time.Duration) *domain.Execution {
			return ownedRun(t, st, a, "gone", lease, called, "")
		}
		fresh, called, live := running(false, time.Millisecond), running(true, time.Millisecond), running(true, time.Hour)
		time.Sleep(20 * time.Millisecond)
		told := map[string]bool{}
		r := newRescuer(rescuerConfig{Store: SQLStore{Store: st}, Node: "here", Logger: quiet(),
			Rescued: func(_ context.Context, x *domain.Execution, requeued bool) { told[x.ID] = requeued }})
		n, err := r.rescue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n != 2 || len(told) != 2 {
			t.Fatalf("rescued %d, told %v", n, told)
		}
		for _, c := range []struct {
			name   string
			x      *domain.Execution
			status string
		}{{"never called a model: queued again", fresh, domain.StatusPending}, {"called a model: failed", called, domain.StatusFailed},
			{"lease held: left alone", live, domain.StatusRunning}} {
			t.Run(c.name, func(t *testing.T) {
				got, err := st.ExecutionGet(ctx, a.WorkspaceID, c.x.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != c.status {
					t.Fatalf("status %s, want %s", got.Status, c.status)
				}
				if requeued, ok := told[c.x.ID]; ok != (c.x != live) || requeued != (c.x == fresh) {
					t.Fatalf("told %v for it (told: %v)", requeued, told)
				}
				if c.status == domain.StatusFailed && got.Error == nil {
					t.Fatal("failed without its error")
				}
			})
		}
		drainPending(t, st, fresh)
	})
}
