package modelhealth

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/segmentio/ksuid"

	"github.com/agentplane/agentplane/internal/dbtest"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// forEachShared runs fn on the health of a SQLite store and, with TEST_DATABASE_URL and
// TEST_REDIS_URL, of a PostgreSQL one and of Redis.
func forEachShared(t *testing.T, fn func(t *testing.T, d Shared)) {
	urls := map[string]string{"sqlite": "memory"}
	if u := dbtest.PostgresURL(t); u != "" {
		urls["postgres"] = u
	}
	for name, u := range urls {
		t.Run(name, func(t *testing.T) {
			st, err := store.Open(context.Background(), u)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			fn(t, NewDatabase(st))
		})
	}
	t.Run("redis", func(t *testing.T) {
		u := os.Getenv("TEST_REDIS_URL")
		if u == "" {
			t.Skip("TEST_REDIS_URL is not set")
		}
		opt, err := redis.ParseURL(u)
		if err != nil {
			t.Fatal(err)
		}
		c := redis.NewClient(opt)
		defer c.Close()
		fn(t, NewRedis(c, "test:health:"+ksuid.New().String()+":"))
	})
}

// TestHealthStore: failures hold a key off from the threshold on, for Retry-After when
// given, else for a wait doubling up to Max; one caller claims the probe; Clear forgets.
func TestHealthStore(t *testing.T) {
	forEachShared(t, func(t *testing.T, d Shared) {
		ctx := context.Background()
		f := domain.HealthFailure{Threshold: 2, Base: time.Second, Max: 3 * time.Second}
		held := func(key string) time.Duration {
			t.Helper()
			states, now, err := d.Read(ctx, []string{key, "other"})
			if err != nil {
				t.Fatal(err)
			}
			if u := states[key].Until; !u.IsZero() {
				return u.Sub(now).Round(100 * time.Millisecond)
			}
			return 0
		}
		for i, want := range []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second} {
			if _, err := d.Fail(ctx, "k", f); err != nil {
				t.Fatal(err)
			}
			if got := held("k"); got != want {
				t.Errorf("after failure %d held off %v, want %v", i+1, got, want)
			}
		}
		f.RetryAfter = 30 * time.Second
		if _, err := d.Fail(ctx, "k", f); err != nil {
			t.Fatal(err)
		}
		if got := held("k"); got != 30*time.Second {
			t.Errorf("with Retry-After held off %v, want 30s", got)
		}
		if err := d.Clear(ctx, "k"); err != nil {
			t.Fatal(err)
		}
		if got := held("k"); got != 0 {
			t.Errorf("cleared, held off %v", got)
		}

		// A hold-off already over: of eight callers, one claims the probe.
		f = domain.HealthFailure{Threshold: 1, Base: time.Millisecond, Max: time.Millisecond}
		if _, err := d.Fail(ctx, "p", f); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
		var wg sync.WaitGroup
		var claimed atomic.Int32
		for range 8 {
			wg.Go(func() {
				ok, err := d.Probe(ctx, "p", 1, time.Minute)
				if err != nil {
					t.Error(err)
				}
				if ok {
					claimed.Add(1)
				}
			})
		}
		wg.Wait()
		if n := claimed.Load(); n != 1 {
			t.Errorf("%d callers claimed the probe, want 1", n)
		}
	})
}
