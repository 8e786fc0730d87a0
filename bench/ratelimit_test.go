package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/cli"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/ratelimit"
	"github.com/agentplane/agentplane/internal/store"
)

// limiterCost charges n requests, spread over keys, from conns goroutines, and returns the
// time per request.
func limiterCost(l *ratelimit.Limiter, keys []string, conns, n int) time.Duration {
	var next atomic.Int64
	var wg sync.WaitGroup
	ctx := context.Background()
	start := time.Now()
	for range conns {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				l.Allow(ctx, keys[int(i)%len(keys)], time.Now())
			}
		})
	}
	wg.Wait()
	return time.Since(start) / time.Duration(n)
}

// BenchmarkRateLimiter reports what one request costs the rate limiter, per request at 32
// concurrent callers over 256 keys: with the buckets in the process (local), and shared
// through PostgreSQL (TEST_DATABASE_URL) and Redis (TEST_REDIS_URL), as a ratio to local.
// The rule is a key's 100 requests per second, so a node reserves ceil(100 × 50 ms) = 5
// tokens per round trip; "_chunk1" is the cost with a round trip on every request (what a
// shared bucket without reservations would cost). The burst is large, so nothing is refused
// (a refusal after an empty take costs no round trip until a token is due).
func BenchmarkRateLimiter(b *testing.B) {
	const conns, n = 32, 20000
	rule := ratelimit.Rule{Rate: 100, Burst: 1 << 30}
	keys := make([]string, 256)
	for i := range keys {
		keys[i] = fmt.Sprintf("key:%d", i)
	}
	type variant struct {
		name   string
		shared ratelimit.Shared
	}
	variants := []variant{{name: "local"}}
	if u := pgSchemaURL(b); u != "" {
		st, err := store.Open(context.Background(), u)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		variants = append(variants, variant{"postgres", ratelimit.NewDatabase(st)})
	}
	if u := os.Getenv("TEST_REDIS_URL"); u != "" {
		r, err := ratelimit.NewRedis(context.Background(), u)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { r.Close() })
		variants = append(variants, variant{"redis", r.WithPrefix("agentplane-bench:" + store.NewID() + ":")})
	}
	costs := map[string]time.Duration{}
	b.ResetTimer()
	for range b.N {
		for i, v := range variants {
			// A fresh limiter (and bucket names) per run, so every run starts with empty reservations.
			name := fmt.Sprintf("bench%d", i)
			costs[v.name] = limiterCost(ratelimit.New(name, rule, v.shared, nil), keys, conns, n)
			if v.shared != nil {
				costs[v.name+"_chunk1"] = limiterCost(ratelimit.New(name+"c1", rule, v.shared, nil, ratelimit.WithChunk(1)), keys, conns, n/5)
			}
		}
	}
	b.StopTimer()
	local := costs["local"]
	for name, c := range costs {
		b.ReportMetric(float64(c.Nanoseconds()), name+"_ns/req")
		if name != "local" {
			b.ReportMetric(float64(c)/float64(local), name+"_vs_local")
		}
	}
}

// rotateKeys sets each request's X-API-Key to the next of keys.
func rotateKeys(h http.Handler, keys []string) http.Handler {
	var next atomic.Uint64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("X-API-Key", keys[next.Add(1)%uint64(len(keys))])
		h.ServeHTTP(w, r)
	})
}

// limitedRPS starts `serve` on dbURL (PostgreSQL) with the rate limit rule (0: off) and
// redisURL for the buckets when set, six agents and 256 keys its requests rotate through;
// loads GET /api/v1/agents from conns connections for d, and stops the server (so that one
// server at a time holds database connections).
func limitedRPS(b *testing.B, dbURL, redisURL string, rate float64, burst, conns int, d time.Duration) float64 {
	ctx := context.Background()
	srv, err := cli.NewServer(ctx, quietLog(), nopWriter{}, cli.ServerConfig{DB: cli.ServerDB(b.TempDir(), dbURL), Workers: 16, Models: cli.ModelsSimulated,
		Limits: cli.Limits{RateLimit: rate, RateBurst: burst}, RedisURL: redisURL})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close(ctx)
	keys := make([]string, 256)
	for i := range keys {
		raw, err := auth.NewKey()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := srv.Store.APIKeyCreate(ctx, &domain.APIKey{WorkspaceID: cli.DefaultWorkspaceID, Name: "bench", Scopes: domain.Strings{"*"},
			KeyPrefix: auth.KeyPrefix(raw)}, auth.HashKey(raw)); err != nil {
			b.Fatal(err)
		}
		keys[i] = raw
	}
	ts := httptest.NewServer(rotateKeys(srv.Handler, keys))
	defer ts.Close()
	load(b, ts.URL+"/api/v1/agents", conns, 500*time.Millisecond) // warm: every key looked up and touched
	return load(b, ts.URL+"/api/v1/agents", conns, d)
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkAuthenticatedListLimited is BenchmarkAuthenticatedList's GET /api/v1/agents on
// `serve` over PostgreSQL at 64 connections, with requests spread over 256 keys limited to
// 100 requests per second each (burst 200: nothing is refused at this load): the buckets
// shared through PostgreSQL (the default there) and, with TEST_REDIS_URL, through Redis,
// against the same server with rate limiting off. Needs TEST_DATABASE_URL.
func BenchmarkAuthenticatedListLimited(b *testing.B) {
	const conns = 64
	d := 3 * time.Second
	if os.Getenv("TEST_DATABASE_URL") == "" {
		b.Skip("TEST_DATABASE_URL is not set")
	}
	redisURL := os.Getenv("TEST_REDIS_URL")
	var offRPS, pgRPS, redisRPS float64
	for range b.N {
		offRPS = limitedRPS(b, pgSchemaURL(b), "", 0, 0, conns, d)
		pgRPS = limitedRPS(b, pgSchemaURL(b), "", 100, 200, conns, d)
		if redisURL != "" {
			redisRPS = limitedRPS(b, pgSchemaURL(b), redisURL, 100, 200, conns, d)
		}
	}
	b.ReportMetric(offRPS, "unlimited_req/s")
	b.ReportMetric(pgRPS, "postgres_buckets_req/s")
	b.ReportMetric(pgRPS/offRPS, "postgres_buckets_vs_unlimited")
	if redisURL != "" {
		b.ReportMetric(redisRPS, "redis_buckets_req/s")
		b.ReportMetric(redisRPS/offRPS, "redis_buckets_vs_unlimited")
	}
}
