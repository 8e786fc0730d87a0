package api

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/ratelimit"
)

// LoginLimits bound failed logins: each attempt takes a token from the bucket of its client
// address and from that of its email, and a successful one gives them back.
type LoginLimits struct {
	// PerEmail is the bucket of one email (default: 10 at once, then one a minute).
	PerEmail ratelimit.Rule
	// PerAddress is the bucket of one client address, an IPv6 /64 counting as one
	// (default: 30 at once, then one every 2 s).
	PerAddress ratelimit.Rule
}

// DefaultLoginLimits is what a zero LoginLimits rule means.
var DefaultLoginLimits = LoginLimits{
	PerEmail:   ratelimit.Rule{Rate: 1.0 / 60, Burst: 10},
	PerAddress: ratelimit.Rule{Rate: 0.5, Burst: 30},
}

// newLimiters builds the request limiter (per API key and per user) and the failed-login
// limiters. Login attempts take one token at a time from the shared store (exact), being
// few and each costing an Argon2 hash anyway.
func (s *Server) newLimiters(cfg Config) {
	s.limits = ratelimit.New("req", ratelimit.Rule{Rate: cfg.RateLimit, Burst: cfg.RateBurst}, cfg.RateShared, cfg.Logger)
	ll := cfg.LoginLimits
	if ll.PerEmail.Rate <= 0 {
		ll.PerEmail = DefaultLoginLimits.PerEmail
	}
	if ll.PerAddress.Rate <= 0 {
		ll.PerAddress = DefaultLoginLimits.PerAddress
	}
	s.loginEmail = ratelimit.New("login-email", ll.PerEmail, cfg.RateShared, cfg.Logger, ratelimit.WithChunk(1))
	s.loginAddr = ratelimit.New("login-addr", ll.PerAddress, cfg.RateShared, cfg.Logger, ratelimit.WithChunk(1))
}

// seconds rounds d up to whole seconds, at least 1.
func seconds(d time.Duration) int { return max(int(math.Ceil(d.Seconds())), 1) }

// rateHeaders are the RateLimit-* headers of a decision.
func rateHeaders(d ratelimit.Decision) http.Header {
	h := http.Header{}
	h.Set("RateLimit-Limit", strconv.Itoa(d.Limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(d.Remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(int(math.Ceil(d.Reset.Seconds()))))
	return h
}

// limitRate charges the request to its API key's bucket, or its user's for a bearer token
// (after authentication, so only real callers get buckets), and sets the RateLimit-*
// headers; over the limit it is a 429 with Retry-After.
func (s *Server) limitRate(w http.ResponseWriter, r *http.Request) error {
	if k := apiKeyOf(r); k != nil {
		return s.charge(w, r, "key:"+k.ID, "this API key")
	}
	if u := userOf(r); u != nil {
		return s.charge(w, r, "user:"+u.id, "this user")
	}
	return nil
}

// limitHook charges a verified hook call to its trigger's bucket, by the rule of API keys: a
// hook URL, whose token is its only key when it has no signing secret, starts runs no faster
// than a key could. Calls failing verification are not charged, so that whoever knows the
// URL but not the secret cannot use up the platform's calls.
func (s *Server) limitHook(w http.ResponseWriter, r *http.Request, triggerID string) error {
	return s.charge(w, r, "trigger:"+triggerID, "this trigger")
}

// charge takes a request from bucket (who names it in the error) and sets the RateLimit-*
// headers; over the limit it is a 429 with Retry-After.
func (s *Server) charge(w http.ResponseWriter, r *http.Request, bucket, who string) error {
	if s.limits == nil {
		return nil
	}
	d := s.limits.Allow(r.Context(), bucket, time.Now())
	h := rateHeaders(d)
	if !d.Allowed {
		rule := s.limits.Rule()
		wait := seconds(d.RetryAfter)
		h.Set("Retry-After", strconv.Itoa(wait))
		err := errorf(http.StatusTooManyRequests, "rate limit of %g requests per second (burst %d) exceeded for %s; retry in %d s", rule.Rate, rule.Burst, who, wait)
		err.Header = h
		return err
	}
	for name, vs := range h {
		w.Header()[name] = vs
	}
	return nil
}

// loginCharge counts a login attempt against its client address and its email, before any
// password is hashed: over either limit it is a 429 with Retry-After. The returned refund
// gives both back; call it when the login succeeded, so that only failures count.
func (s *Server) loginCharge(ctx context.Context, r *http.Request, email string) (refund func(), err error) {
	now := time.Now()
	addr := loginAddress(r, s.trusted)
	email = strings.ToLower(strings.TrimSpace(email))
	if d := s.loginAddr.Allow(ctx, addr, now); !d.Allowed {
		return nil, tooManyLogins("from your address", d)
	}
	if d := s.loginEmail.Allow(ctx, email, now); !d.Allowed {
		return nil, tooManyLogins("for this email", d)
	}
	return func() {
		ctx := context.WithoutCancel(ctx)
		s.loginAddr.Refund(ctx, addr, now)
		s.loginEmail.Refund(ctx, email, now)
	}, nil
}

func tooManyLogins(what string, d ratelimit.Decision) *Error {
	wait := seconds(d.RetryAfter)
	err := errorf(http.StatusTooManyRequests, "too many failed logins %s; retry in %d s", what, wait)
	err.Header = http.Header{"Retry-After": {strconv.Itoa(wait)}}
	return err
}

// loginAddress is the client address failed logins are counted by: auth.ClientIP with the
// trusted proxies, an IPv6 address counting as its /64 (what one host usually holds).
func loginAddress(r *http.Request, trusted *auth.IPAllowlist) string {
	ip, err := auth.ClientIP(r.RemoteAddr, r.Header.Values("X-Forwarded-For"), trusted)
	if err != nil {
		return r.RemoteAddr
	}
	ip = ip.Unmap()
	if ip.Is6() {
		if p, err := ip.Prefix(64); err == nil {
			return p.String()
		}
	}
	return ip.String()
}

// loginBusy answers a login that found every password-hashing slot taken and the queue
// full (see auth.ErrBusy).
func loginBusy(err error) error {
	if errors.Is(err, auth.ErrBusy) {
		e := errorf(http.StatusTooManyRequests, "too many logins are being checked on this server; retry in 1 s")
		e.Header = http.Header{"Retry-After": {"1"}}
		return e
	}
	return err
}
