package ratelimit

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/dbtest"

	_ "github.com/jackc/pgx/v5/stdlib"
	"go.uber.org/goleak"

	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/store/storetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"))
}

// slow is a rate at which no token comes back within a test.
const slow = 0.001

func TestLocalBuckets(t *testing.T) {
	ctx := context.Background()
	l := New("t", Rule{Rate: slow, Burst: 3}, nil, nil)
	now := time.Now()
	for i, want := range []int{2, 1, 0} {
		d := l.Allow(ctx, "k", now)
		if !d.Allowed || d.Remaining != want || d.Limit != 3 || d.Reset <= 0 {
			t.Fatalf("request %d: %+v", i, d)
		}
	}
	d := l.Allow(ctx, "k", now)
	if d.Allowed || d.RetryAfter < 900*time.Second {
		t.Fatalf("over the burst: %+v", d)
	}
	if d := l.Allow(ctx, "other", now); !d.Allowed {
		t.Fatal("keys share a bucket")
	}
	l.Refund(ctx, "k", now)
	if d := l.Allow(ctx, "k", now); !d.Allowed {
		t.Fatalf("refunded token not there: %+v", d)
	}
	off := New("off", Rule{}, nil, nil)
	if off != nil {
		t.Fatal("a rule without a rate must be no limiter")
	}
	if !off.Allow(ctx, "k", now).Allowed {
		t.Fatal("no limiter refused")
	}
	off.Refund(ctx, "k", now)
}

func TestIdleBucketsForgotten(t *testing.T) {
	ctx := context.Background()
	l := New("t", Rule{Rate: 10, Burst: 5}, nil, nil)
	t0 := time.Now()
	l.Allow(ctx, "a", t0)
	l.Allow(ctx, "b", t0.Add(idle/2))
	l.Allow(ctx, "c", t0.Add(idle+time.Second))
	if n := l.Size(); n != 2 { // a idle long enough; b and c kept
		t.Fatalf("%d buckets, want 2", n)
	}
	l.Allow(ctx, "c", t0.Add(3*idle))
	if n := l.Size(); n != 1 {
		t.Fatalf("%d buckets, want 1", n)
	}
}

// memShared is a Shared in memory that counts its takes, as one store seen by many nodes.
type memShared struct {
	mu    sync.Mutex
	level map[string]float64
	takes atomic.Int32
	fail  atomic.Bool
}

func (m *memShared) Take(_ context.Context, key string, rule Rule, n int) (int, float64, error) {
	m.takes.Add(1)
	if m.fail.Load() {
		return 0, 0, errors.New("store down")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.level == nil {
		m.level = map[string]float64{}
	}
	lv, ok := m.level[key]
	if !ok {
		lv = float64(rule.Burst)
	}
	got := min(n, int(lv))
	m.level[key] = min(lv-float64(got), float64(rule.Burst))
	return max(got, 0), m.level[key], nil
}

// TestSharedChunks: a node reserves a chunk at a time (one take per chunk of requests);
// nodes sharing a bucket together admit exactly what it holds; a node that found it empty
// refuses without asking again until a token is due.
func TestSharedChunks(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	m := &memShared{}
	rule := Rule{Rate: 1000, Burst: 200}
	l := New("t", rule, m, nil)
	if l.Chunk() != 50 {
		t.Fatalf("chunk %d, want 50 (1000/s × 50 ms)", l.Chunk())
	}
	for range 100 {
		if !l.Allow(ctx, "k", now).Allowed {
			t.Fatal("refused within the burst")
		}
	}
	if n := m.takes.Load(); n != 2 {
		t.Fatalf("%d takes for 100 requests, want 2", n)
	}

	// Three nodes share a bucket of 10 (no refill): exactly 10 admitted in all.
	m = &memShared{}
	var nodes []*Limiter
	for range 3 {
		nodes = append(nodes, New("t", Rule{Rate: slow, Burst: 10}, m, nil, WithChunk(4)))
	}
	allowed := 0
	for i := range 30 {
		if nodes[i%3].Allow(ctx, "k", now).Allowed {
			allowed++
		}
	}
	if allowed != 10 {
		t.Fatalf("%d admitted across nodes from a bucket of 10", allowed)
	}
	// Refused without a round trip until a token is due.
	before := m.takes.Load()
	d := nodes[0].Allow(ctx, "k", now)
	if d.Allowed || d.RetryAfter <= 0 || m.takes.Load() != before {
		t.Fatalf("empty bucket: %+v, %d takes", d, m.takes.Load()-before)
	}
}

// TestSharedStoreDown: when the shared store fails, the node limits on its own bucket.
func TestSharedStoreDown(t *testing.T) {
	ctx := context.Background()
	m := &memShared{}
	m.fail.Store(true)
	l := New("t", Rule{Rate: slow, Burst: 2}, m, nil)
	now := time.Now()
	if !l.Allow(ctx, "k", now).Allowed || !l.Allow(ctx, "k", now).Allowed || l.Allow(ctx, "k", now).Allowed {
		t.Fatal("the fallback is not the rule's bucket")
	}
}

// TestSharedStores runs the same checks on every Shared: the database on SQLite and
// PostgreSQL, and Redis when TEST_REDIS_URL is set.
func TestSharedStores(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		checkShared(t, NewDatabase(storetest.Memory(t)))
	})
	t.Run("postgres", func(t *testing.T) {
		st := openTestPostgres(t)
		checkShared(t, NewDatabase(st))
	})
	t.Run("redis", func(t *testing.T) {
		checkShared(t, openTestRedis(t))
	})
}

func checkShared(t *testing.T, s Shared) {
	ctx := context.Background()
	take := func(key string, rule Rule, n int) (int, float64) {
		t.Helper()
		got, left, err := s.Take(ctx, key, rule, n)
		if err != nil {
			t.Fatal(err)
		}
		return got, left
	}
	r5 := Rule{Rate: slow, Burst: 5}
	if got, left := take("k", r5, 3); got != 3 || left < 1.99 || left > 2.01 {
		t.Fatalf("first take: %d, %v left", got, left)
	}
	if got, _ := take("k", r5, 3); got != 2 {
		t.Fatalf("partial take: %d", got)
	}
	if got, left := take("k", r5, 1); got != 0 || left >= 1 {
		t.Fatalf("empty bucket gave %d (%v left)", got, left)
	}
	if _, left := take("k", r5, -1); left < 0.99 || left > 1.01 {
		t.Fatalf("give back: %v left", left)
	}
	if got, _ := take("fast", Rule{Rate: 50, Burst: 2}, 2); got != 2 {
		t.Fatalf("fast: %d", got)
	}
	time.Sleep(150 * time.Millisecond)
	if got, _ := take("fast", Rule{Rate: 50, Burst: 2}, 5); got != 2 {
		t.Fatalf("after refill: %d", got)
	}
	// Two nodes with chunks, many goroutines each, one bucket: exactly its size admitted.
	var admitted atomic.Int32
	var wg sync.WaitGroup
	for range 2 { // nodes
		l := New("nodes", Rule{Rate: slow, Burst: 40}, s, nil, WithChunk(3))
		for range 8 {
			wg.Go(func() {
				for range 10 {
					if l.Allow(ctx, "k", time.Now()).Allowed {
						admitted.Add(1)
					}
				}
			})
		}
	}
	wg.Wait()
	if admitted.Load() != 40 {
		t.Fatalf("%d admitted across two nodes from a bucket of 40", admitted.Load())
	}
}

// openTestPostgres opens TEST_DATABASE_URL in a schema of its own (dropped at the end), or
// skips the test when it is unset.
func openTestPostgres(t *testing.T) *store.Store {
	t.Helper()
	return storetest.Open(t, dbtest.PostgresURL(t))
}

// openTestRedis connects to TEST_REDIS_URL with keys of its own, or skips the test.
func openTestRedis(t *testing.T) *Redis {
	t.Helper()
	u := os.Getenv("TEST_REDIS_URL")
	if u == "" {
		t.Skip("TEST_REDIS_URL is not set: skipping the Redis run (set it to a redis:// URL, e.g. redis://127.0.0.1:6379/0, to run it)")
	}
	r, err := NewRedis(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r.WithPrefix("agentplane-test:" + store.NewID() + ":")
}
