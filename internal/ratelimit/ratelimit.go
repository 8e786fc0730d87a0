// Package ratelimit holds token buckets by key (an API key, a user, a login email or client
// address): in this process alone, or shared by every node through PostgreSQL or Redis, from
// which each node takes tokens a chunk at a time so that most requests cost no round trip.
package ratelimit

import (
	"context"
	"log/slog"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Rule is a token bucket: it holds at most Burst tokens and refills at Rate per second.
type Rule struct {
	Rate  float64
	Burst int
}

// Shared is a token bucket store every node sees (PostgreSQL or Redis).
type Shared interface {
	// Take takes up to n tokens from the bucket key under rule (a bucket not seen before is
	// full; a negative n gives tokens back, up to the burst). It returns how many it got and
	// how many are left, by the store's clock.
	Take(ctx context.Context, key string, rule Rule, n int) (granted int, left float64, err error)
}

// Window is how much of its rate a node reserves from a shared bucket at once: a chunk of
// ceil(Rate × Window) tokens (at least 1, at most Burst). A node then asks the shared store
// at most about once per Window per busy key, and holds at most a chunk less one unspent
// token per key: with N nodes the limit is exact to within N × (chunk − 1) requests.
const Window = 50 * time.Millisecond

// idle is how long a key's bucket may go unused before this process forgets it; a forgotten
// local bucket comes back full, which an idle key would have reached anyway, and the tokens
// a forgotten shared reservation held are lost (the limit errs on the strict side).
const idle = 10 * time.Minute

// takeTimeout bounds a round trip to the shared store: past it, the request is judged by the
// node's own bucket.
const takeTimeout = time.Second

// Decision is what a charge to a bucket decided, with what the RateLimit-* headers say.
type Decision struct {
	Allowed bool
	// Limit is the bucket's size, Remaining about how many tokens are left in it.
	Limit, Remaining int
	// Reset is the time until the bucket is full again.
	Reset time.Duration
	// RetryAfter, when not Allowed, is the time until a token is back.
	RetryAfter time.Duration
}

// Limiter is a set of token buckets of one Rule, by key.
type Limiter struct {
	name   string
	rule   Rule
	shared Shared // nil: buckets in this process only
	chunk  int
	log    *slog.Logger

	mu       sync.Mutex
	byKey    map[string]*bucket
	swept    time.Time
	warnedAt time.Time // last warning about the shared store failing
}

// bucket is one key's state on this node.
type bucket struct {
	used time.Time // under Limiter.mu

	mu sync.Mutex
	// local is the key's bucket when there is no shared store, and the fallback when it fails.
	local *rate.Limiter
	// Shared mode: held is what this node reserved and has not spent; left and at are the
	// shared bucket's level at the last take; deniedUntil is when a token is back after the
	// shared bucket was found empty (until then requests are refused without asking).
	held        int
	left        float64
	at          time.Time
	deniedUntil time.Time
}

// Option tunes a Limiter.
type Option func(*Limiter)

// WithChunk makes the limiter reserve n tokens at a time from the shared store instead of
// the Window's worth; 1 makes every charge a round trip, and the limit exact.
func WithChunk(n int) Option {
	return func(l *Limiter) { l.chunk = max(1, min(n, l.rule.Burst)) }
}

// New returns a limiter of rule named name (it prefixes the keys in the shared store), or nil
// when rule.Rate is not positive (no limit). shared nil keeps the buckets in this process.
func New(name string, rule Rule, shared Shared, log *slog.Logger, opts ...Option) *Limiter {
	if rule.Rate <= 0 {
		return nil
	}
	rule.Burst = max(rule.Burst, 1)
	l := &Limiter{name: name, rule: rule, shared: shared, log: log, byKey: map[string]*bucket{}, swept: time.Now(),
		chunk: max(1, min(int(math.Ceil(rule.Rate*Window.Seconds())), rule.Burst))}
	for _, o := range opts {
		o(l)
	}
	return l
}

// Rule returns the limiter's rule.
func (l *Limiter) Rule() Rule { return l.rule }

// Chunk returns how many tokens the limiter reserves from the shared store at a time.
func (l *Limiter) Chunk() int { return l.chunk }

// bucket returns key's bucket, dropping buckets idle for long (at most once per idle).
func (l *Limiter) bucket(key string, now time.Time) *bucket {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) >= idle {
		for k, b := range l.byKey {
			if now.Sub(b.used) >= idle {
				delete(l.byKey, k)
			}
		}
		l.swept = now
	}
	b, ok := l.byKey[key]
	if !ok {
		b = &bucket{}
		l.byKey[key] = b
	}
	b.used = now
	return b
}

// Size is how many keys have a bucket in this process.
func (l *Limiter) Size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.byKey)
}

// Allow charges one token to key's bucket. A nil Limiter (no limit) allows everything.
func (l *Limiter) Allow(ctx context.Context, key string, now time.Time) Decision {
	if l == nil {
		return Decision{Allowed: true}
	}
	b := l.bucket(key, now)
	b.mu.Lock()
	defer b.mu.Unlock()
	if l.shared == nil {
		return l.allowLocal(b, now)
	}
	if b.held > 0 {
		b.held--
		return l.sharedDecision(b, now, true)
	}
	if now.Before(b.deniedUntil) {
		return l.sharedDecision(b, now, false)
	}
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), takeTimeout)
	granted, left, err := l.shared.Take(tctx, l.name+":"+key, l.rule, l.chunk)
	cancel()
	if err != nil {
		l.warn("rate limit store failed: this node limits on its own until it answers", err)
		return l.allowLocal(b, now)
	}
	b.left, b.at = left, now
	if granted == 0 {
		b.deniedUntil = now.Add(l.untilOne(left))
		return l.sharedDecision(b, now, false)
	}
	b.held = granted - 1
	return l.sharedDecision(b, now, true)
}

// Refund gives one token back to key's bucket (a charge that should not count, such as a
// login that succeeded).
func (l *Limiter) Refund(ctx context.Context, key string, now time.Time) {
	if l == nil {
		return
	}
	b := l.bucket(key, now)
	b.mu.Lock()
	defer b.mu.Unlock()
	if l.shared == nil {
		if b.local != nil {
			b.local.ReserveN(now, -1) // a negative reservation puts a token back (capped at the burst)
		}
		return
	}
	if l.chunk > 1 {
		b.held = min(b.held+1, l.chunk)
		return
	}
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), takeTimeout)
	defer cancel()
	if _, left, err := l.shared.Take(tctx, l.name+":"+key, l.rule, -1); err == nil {
		b.left, b.at, b.deniedUntil = left, now, time.Time{}
	}
}

// allowLocal charges b's own token bucket.
func (l *Limiter) allowLocal(b *bucket, now time.Time) Decision {
	if b.local == nil {
		b.local = rate.NewLimiter(rate.Limit(l.rule.Rate), l.rule.Burst)
	}
	ok := b.local.AllowN(now, 1)
	return l.decision(ok, b.local.TokensAt(now))
}

// sharedDecision describes b after a charge: the shared level at the last take, refilled
// since by the rule, plus what this node holds.
func (l *Limiter) sharedDecision(b *bucket, now time.Time, ok bool) Decision {
	level := math.Min(float64(l.rule.Burst), b.left+now.Sub(b.at).Seconds()*l.rule.Rate) + float64(b.held)
	return l.decision(ok, level)
}

func (l *Limiter) decision(ok bool, tokens float64) Decision {
	d := Decision{Allowed: ok, Limit: l.rule.Burst, Remaining: max(int(math.Floor(tokens)), 0),
		Reset: max(time.Duration((float64(l.rule.Burst)-tokens)/l.rule.Rate*float64(time.Second)), 0)}
	if !ok {
		d.RetryAfter = l.untilOne(tokens)
	}
	return d
}

// untilOne is the time until a bucket at level tokens has one whole token.
func (l *Limiter) untilOne(tokens float64) time.Duration {
	return max(time.Duration((1-tokens)/l.rule.Rate*float64(time.Second)), time.Millisecond)
}

// warn logs a failing shared store at most every 10 s.
func (l *Limiter) warn(msg string, err error) {
	l.mu.Lock()
	now := time.Now()
	quiet := now.Sub(l.warnedAt) < 10*time.Second
	if !quiet {
		l.warnedAt = now
	}
	l.mu.Unlock()
	if !quiet && l.log != nil {
		l.log.Warn(msg, "limiter", l.name, "error", err)
	}
}
