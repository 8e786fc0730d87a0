package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agentplane/agentplane/internal/store"
)

// sweepEvery is how often a node deletes the database's buckets that are full again.
const sweepEvery = 10 * time.Minute

// Database keeps the shared buckets in the store's rate_buckets table (one statement per
// take, by the database's clock).
type Database struct {
	st    *store.Store
	mu    sync.Mutex
	swept time.Time
}

var _ Shared = (*Database)(nil)

// NewDatabase returns the shared buckets of st.
func NewDatabase(st *store.Store) *Database { return &Database{st: st, swept: time.Now()} }

// Take implements Shared. Every sweepEvery, one take also deletes the buckets that are full
// again (a missing bucket is a full one), which keeps the table to the keys in use without
// a background job.
func (d *Database) Take(ctx context.Context, key string, rule Rule, n int) (int, float64, error) {
	d.mu.Lock()
	sweep := time.Since(d.swept) >= sweepEvery
	if sweep {
		d.swept = time.Now()
	}
	d.mu.Unlock()
	if sweep {
		if _, err := d.st.RateSweep(ctx); err != nil {
			return 0, 0, err
		}
	}
	return d.st.RateTake(ctx, key, rule.Rate, rule.Burst, n)
}

// redisTake is the take of store.RateTake as a Redis script: atomic on the server, by the
// server's clock. A bucket is a hash (tokens, ts) that expires once it would be full again,
// so idle keys cost nothing. The level is returned as a string: Redis truncates Lua numbers.
var redisTake = redis.NewScript(`
local rate, burst, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local b = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens, ts = tonumber(b[1]), tonumber(b[2])
if tokens == nil or ts == nil then tokens, ts = burst, now end
local avail = math.min(burst, tokens + math.max(0, now - ts) * rate)
local granted = n
if n >= 0 then granted = math.min(n, math.floor(avail)) end
local left = math.min(burst, avail - granted)
redis.call('HSET', KEYS[1], 'tokens', tostring(left), 'ts', tostring(math.max(ts, now)))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - left) / rate * 1000) + 1000)
return {granted, tostring(left)}
`)

// Redis keeps the shared buckets in Redis (--redis-url): one script call per take.
type Redis struct {
	c      *redis.Client
	prefix string
}

var _ Shared = (*Redis)(nil)

// NewRedis connects to the Redis at url (redis:// or rediss://) and checks that it answers.
func NewRedis(ctx context.Context, url string) (*Redis, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis url: %w", err)
	}
	c := redis.NewClient(opt)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.Ping(pctx).Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("connect to redis: %w", err)
	}
	return &Redis{c: c, prefix: "agentplane:rate:"}, nil
}

// WithPrefix returns r with its keys under prefix instead (tests keep theirs apart).
func (r *Redis) WithPrefix(prefix string) *Redis { return &Redis{c: r.c, prefix: prefix} }

// Take implements Shared.
func (r *Redis) Take(ctx context.Context, key string, rule Rule, n int) (int, float64, error) {
	res, err := redisTake.Run(ctx, r.c, []string{r.prefix + key}, rule.Rate, rule.Burst, n).Slice()
	if err != nil {
		return 0, 0, fmt.Errorf("take from redis bucket %s: %w", key, err)
	}
	if len(res) != 2 {
		return 0, 0, errors.New("take from redis bucket: unexpected reply")
	}
	granted, _ := res[0].(int64)
	s, _ := res[1].(string)
	left, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("take from redis bucket %s: level %q: %w", key, s, err)
	}
	return int(max(granted, 0)), left, nil
}

// Client is the connection to Redis, for other state shared the same way (model health).
func (r *Redis) Client() *redis.Client { return r.c }

// Close closes the connections.
func (r *Redis) Close() error { return r.c.Close() }
