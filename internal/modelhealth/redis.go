package modelhealth

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agentplane/agentplane/internal/domain"
)

// idleTTL is how long Redis keeps a key past its hold-off: failures older than that are
// forgotten.
const idleTTL = 10 * time.Minute

// redisRead returns the server's clock in ms, then failures and until_ms of each key.
var redisRead = redis.NewScript(`
local t = redis.call('TIME')
local out = {t[1] * 1000 + math.floor(t[2] / 1000)}
for i, k in ipairs(KEYS) do
  local v = redis.call('HMGET', k, 'failures', 'until')
  out[#out + 1] = tonumber(v[1]) or -1
  out[#out + 1] = tonumber(v[2]) or 0
end
return out
`)

// redisFail is store.HealthFail as a script: atomic on the server, by its clock.
var redisFail = redis.NewScript(`
local threshold, base, max, after = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
local backoff = tonumber(redis.call('HGET', KEYS[1], 'backoff')) or 0
local untilMS = tonumber(redis.call('HGET', KEYS[1], 'until')) or 0
if failures >= threshold then
  if backoff == 0 then backoff = base elseif backoff * 2 > max then backoff = max else backoff = backoff * 2 end
  if after > 0 then untilMS = now + after else untilMS = now + backoff end
else
  backoff = 0
end
redis.call('HSET', KEYS[1], 'backoff', backoff, 'until', untilMS)
redis.call('PEXPIRE', KEYS[1], math.max(untilMS - now, 0) + tonumber(ARGV[5]))
return {failures, untilMS}
`)

// redisProbe is store.HealthProbe as a script.
var redisProbe = redis.NewScript(`
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local v = redis.call('HMGET', KEYS[1], 'failures', 'until')
local failures, untilMS = tonumber(v[1]) or 0, tonumber(v[2]) or 0
if failures < tonumber(ARGV[1]) or untilMS == 0 or untilMS > now then return 0 end
redis.call('HSET', KEYS[1], 'until', now + tonumber(ARGV[2]))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) + tonumber(ARGV[3]))
return 1
`)

// Redis keeps health in Redis (--redis-url), where the rate limits are.
type Redis struct {
	c      *redis.Client
	prefix string
}

var _ Shared = (*Redis)(nil)

// NewRedis keeps health in the Redis of c, under prefix.
func NewRedis(c *redis.Client, prefix string) *Redis { return &Redis{c: c, prefix: prefix} }

// Read implements Shared.
func (r *Redis) Read(ctx context.Context, keys []string) (map[string]domain.HealthState, time.Time, error) {
	full := make([]string, len(keys))
	for i, k := range keys {
		full[i] = r.prefix + k
	}
	res, err := redisRead.Run(ctx, r.c, full).Int64Slice()
	if err != nil || len(res) != 1+2*len(keys) {
		return nil, time.Time{}, fmt.Errorf("read model health from redis: %v", err)
	}
	out := map[string]domain.HealthState{}
	for i, k := range keys {
		failures, until := res[1+2*i], res[2+2*i]
		if failures < 0 {
			continue
		}
		st := domain.HealthState{Failures: int(failures)}
		if until > 0 {
			st.Until = time.UnixMilli(until)
		}
		out[k] = st
	}
	return out, time.UnixMilli(res[0]), nil
}

// Fail implements Shared.
func (r *Redis) Fail(ctx context.Context, key string, f domain.HealthFailure) (domain.HealthState, error) {
	res, err := redisFail.Run(ctx, r.c, []string{r.prefix + key}, f.Threshold, f.Base.Milliseconds(), f.Max.Milliseconds(),
		f.RetryAfter.Milliseconds(), idleTTL.Milliseconds()).Int64Slice()
	if err != nil || len(res) != 2 {
		return domain.HealthState{}, fmt.Errorf("record failure of %s in redis: %v", key, err)
	}
	st := domain.HealthState{Failures: int(res[0])}
	if res[1] > 0 {
		st.Until = time.UnixMilli(res[1])
	}
	return st, nil
}

// Probe implements Shared.
func (r *Redis) Probe(ctx context.Context, key string, threshold int, lease time.Duration) (bool, error) {
	n, err := redisProbe.Run(ctx, r.c, []string{r.prefix + key}, threshold, lease.Milliseconds(), idleTTL.Milliseconds()).Int64()
	if err != nil {
		return false, fmt.Errorf("claim the probe of %s in redis: %w", key, err)
	}
	return n == 1, nil
}

// Clear implements Shared.
func (r *Redis) Clear(ctx context.Context, key string) error {
	if err := r.c.Del(ctx, r.prefix+key).Err(); err != nil {
		return fmt.Errorf("clear failures of %s in redis: %w", key, err)
	}
	return nil
}
