package api

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// limiterIdle is how long a key's limiter may go unused before it is dropped; a dropped
// limiter comes back full, which an idle key would have reached anyway.
const limiterIdle = 10 * time.Minute

// keyLimiter is one API key's token bucket and when it was last used.
type keyLimiter struct {
	lim  *rate.Limiter
	used time.Time
}

// rateLimits holds one token bucket per API key id. Idle buckets are swept on access (at most
// once per limiterIdle), so there is no background goroutine to stop.
type rateLimits struct {
	limit rate.Limit
	burst int
	mu    sync.Mutex
	byKey map[string]*keyLimiter
	swept time.Time
}

// newRateLimits returns nil (no limiting) when perSecond is zero or less.
func newRateLimits(perSecond float64, burst int) *rateLimits {
	if perSecond <= 0 {
		return nil
	}
	if burst < 1 {
		burst = 1
	}
	return &rateLimits{limit: rate.Limit(perSecond), burst: burst, byKey: map[string]*keyLimiter{}, swept: time.Now()}
}

// allow takes one token from the key's bucket. It returns the rate headers to send and, when
// the bucket is empty, a 429 carrying them and Retry-After.
func (l *rateLimits) allow(keyID string, now time.Time) (http.Header, error) {
	l.mu.Lock()
	if now.Sub(l.swept) >= limiterIdle {
		for id, e := range l.byKey {
			if now.Sub(e.used) >= limiterIdle {
				delete(l.byKey, id)
			}
		}
		l.swept = now
	}
	e, ok := l.byKey[keyID]
	if !ok {
		e = &keyLimiter{lim: rate.NewLimiter(l.limit, l.burst)}
		l.byKey[keyID] = e
	}
	e.used = now
	l.mu.Unlock()

	ok = e.lim.AllowN(now, 1)
	tokens := e.lim.TokensAt(now)
	remaining := max(int(math.Floor(tokens)), 0)
	// Reset: seconds until the bucket is full again.
	reset := int(math.Ceil((float64(l.burst) - tokens) / float64(l.limit)))
	h := http.Header{}
	h.Set("RateLimit-Limit", strconv.Itoa(l.burst))
	h.Set("RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(max(reset, 0)))
	if ok {
		return h, nil
	}
	// Seconds until one token is back.
	wait := max(int(math.Ceil((1-tokens)/float64(l.limit))), 1)
	h.Set("Retry-After", strconv.Itoa(wait))
	err := errorf(http.StatusTooManyRequests, "rate limit of %g requests per second (burst %d) exceeded for this API key; retry in %d s", float64(l.limit), l.burst, wait)
	err.Header = h
	return h, err
}

// size is how many keys have a bucket (for tests).
func (l *rateLimits) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.byKey)
}

// limitRate charges the request to its API key's bucket (after authentication, so only real
// keys get buckets) and sets the RateLimit-* headers; over the limit it is a 429.
func (s *Server) limitRate(w http.ResponseWriter, r *http.Request) error {
	k := apiKeyOf(r)
	if s.limits == nil || k == nil {
		return nil
	}
	h, err := s.limits.allow(k.ID, time.Now())
	if err != nil {
		return err
	}
	for name, vs := range h {
		w.Header()[name] = vs
	}
	return nil
}
