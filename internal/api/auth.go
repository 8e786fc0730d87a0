package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

const (
	// keyCacheTTL is how long a key found in the database is trusted without reading it again.
	// Rotating or revoking through this process drops the entry at once; a change made by
	// another process is seen within this time.
	keyCacheTTL = 30 * time.Second
	// keyCacheMax bounds the cache; it is cleared when full.
	keyCacheMax = 10000
	// touchEvery is the least time between two writes of a key's last_used_at.
	touchEvery = time.Minute
)

const (
	apiKeyCtx ctxKey = iota + 100
	apiKeyHashCtx
)

// authKey is a key found by its hash, with its IP rules parsed once.
type authKey struct {
	key     *domain.APIKey
	ips     *auth.IPAllowlist
	fetched time.Time
}

// keyAuth authenticates X-API-Key requests: a cache of keys by hash, so a warm key costs no
// query, and the coalescing of last_used_at writes.
type keyAuth struct {
	mu      sync.Mutex
	byHash  map[string]*authKey
	touched map[string]time.Time // key id → last write of last_used_at by this process
	closed  bool
	wg      sync.WaitGroup
}

func newKeyAuth() *keyAuth {
	return &keyAuth{byHash: map[string]*authKey{}, touched: map[string]time.Time{}}
}

// invalidate drops every cached entry of the key id (after a rotation or revocation).
func (a *keyAuth) invalidate(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for h, e := range a.byHash {
		if e.key.ID == id {
			delete(a.byHash, h)
		}
	}
}

// invalidateWorkspace drops every cached key of workspace ws (deleted), or every key when ws
// is "" (a deletion may have gone unheard).
func (a *keyAuth) invalidateWorkspace(ws string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for h, e := range a.byHash {
		if ws == "" || e.key.WorkspaceID == ws {
			delete(a.byHash, h)
		}
	}
}

// close waits for pending last_used_at writes and stops new ones.
func (a *keyAuth) close() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.wg.Wait()
}

var errBadKey = errorf(http.StatusUnauthorized, "invalid API key: check the X-API-Key (or Authorization: Bearer) header")

// bearerToken returns the token of an `Authorization: Bearer <token>` header.
func bearerToken(authz string) (string, bool) {
	scheme, tok, ok := strings.Cut(authz, " ")
	tok = strings.TrimSpace(tok)
	return tok, ok && strings.EqualFold(scheme, "Bearer") && tok != ""
}

// lookup returns the key whose hash is hash, from the cache or the database.
func (s *Server) lookupKey(ctx context.Context, hash string) (*authKey, error) {
	a := s.keys
	now := time.Now()
	a.mu.Lock()
	e, ok := a.byHash[hash]
	a.mu.Unlock()
	if ok && now.Sub(e.fetched) < keyCacheTTL {
		return e, nil
	}
	k, err := s.store.APIKeyByHash(ctx, hash)
	if store.IsNotFound(err) {
		a.mu.Lock()
		delete(a.byHash, hash)
		a.mu.Unlock()
		return nil, errBadKey
	}
	if err != nil {
		return nil, err
	}
	ips, err := auth.ParseIPAllowlist(k.AllowedIPs)
	if err != nil {
		// Stored rules were validated on the way in; a bad one denies everything rather than nothing.
		s.log.Error("api key has invalid allowed_ips", slog.String("key_id", k.ID), slog.Any("error", err))
		ips, _ = auth.ParseIPAllowlist([]string{"255.255.255.255/32"})
	}
	e = &authKey{key: k, ips: ips, fetched: now}
	a.mu.Lock()
	if len(a.byHash) >= keyCacheMax {
		clear(a.byHash)
	}
	a.byHash[hash] = e
	a.mu.Unlock()
	return e, nil
}

// authenticate checks the request's API key against what rt requires and returns the request
// with the key in its context. The emulator accepts anything.
func (s *Server) authenticate(r *http.Request, rt route) (*http.Request, error) {
	if s.cfg.Emulator || rt.scope == "" {
		return r, nil
	}
	raw := r.Header.Get("X-API-Key")
	if raw == "" {
		if authz := r.Header.Get("Authorization"); authz != "" {
			// OpenAI- and Dify-style tooling sends keys as bearer tokens: a bearer value with the
			// key prefix is a key, anything else a login (or identity provider) token.
			if tok, ok := bearerToken(authz); ok && strings.HasPrefix(tok, auth.KeyPrefixMarker) {
				raw = tok
			} else {
				return s.authenticateUser(r, rt, authz)
			}
		}
	}
	if rt.userOnly && raw == "" {
		return nil, errorf(http.StatusUnauthorized, "missing credentials: %s %s is for logged-in users: send Authorization: Bearer <token> from POST /api/v1/auth/login", rt.method, rt.path)
	}
	if rt.userOnly {
		return nil, errorf(http.StatusForbidden, "%s %s is for logged-in users: send Authorization: Bearer <token> from POST /api/v1/auth/login, not an API key", rt.method, rt.path)
	}
	if raw == "" {
		return nil, errorf(http.StatusUnauthorized, "missing credentials: send an API key in the X-API-Key header or a login token as Authorization: Bearer <token>")
	}
	if err := auth.ParseKey(raw); err != nil {
		return nil, errBadKey
	}
	hash := auth.HashKey(raw)
	e, err := s.lookupKey(r.Context(), hash)
	if err != nil {
		return nil, err
	}
	k := e.key
	now := time.Now()
	if k.ExpiresAt != nil && !now.Before(k.ExpiresAt.Time) {
		return nil, errorf(http.StatusUnauthorized, "API key %s expired at %s", k.KeyPrefix, k.ExpiresAt.UTC().Format(time.RFC3339))
	}
	for _, scope := range []string{rt.scope, rt.also} {
		if scope != "" && !grants(k.Scopes, scope) {
			return nil, errorf(http.StatusForbidden, "API key %s lacks the scope %s required by %s %s", k.KeyPrefix, scope, rt.method, rt.path)
		}
	}
	if e.ips.Len() > 0 {
		ip, err := auth.ClientIP(r.RemoteAddr, r.Header.Values("X-Forwarded-For"), s.trusted)
		if err != nil || !e.ips.Allows(ip) {
			return nil, errorf(http.StatusForbidden, "API key %s may not be used from address %s (allowed_ips)", k.KeyPrefix, ip)
		}
	}
	if origin := r.Header.Get("Origin"); origin != "" && len(k.AllowedOrigins) > 0 && !auth.OriginAllowed(k.AllowedOrigins, origin) {
		return nil, errorf(http.StatusForbidden, "API key %s may not be used from origin %q (allowed_origins)", k.KeyPrefix, origin)
	}
	s.touchKey(k.ID, now)
	ctx := context.WithValue(context.WithValue(r.Context(), apiKeyCtx, k), apiKeyHashCtx, hash)
	return r.WithContext(ctx), nil
}

// grants is auth.Grants, except that the key routes' scope "*" must be held as such.
func grants(granted []string, needed string) bool {
	if needed == auth.ScopeAll {
		return slices.Contains(granted, auth.ScopeAll)
	}
	return auth.Grants(granted, needed)
}

// touchKey writes last_used_at in the background, at most once per touchEvery per key.
func (s *Server) touchKey(id string, now time.Time) {
	a := s.keys
	a.mu.Lock()
	if a.closed || now.Sub(a.touched[id]) < touchEvery {
		a.mu.Unlock()
		return
	}
	if len(a.touched) >= keyCacheMax {
		clear(a.touched)
	}
	a.touched[id] = now
	a.wg.Add(1)
	a.mu.Unlock()
	go func() {
		defer a.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.store.APIKeyTouch(ctx, id, domain.Time{Time: now.UTC().Truncate(time.Millisecond)}); err != nil && !errors.Is(err, context.Canceled) {
			s.log.Warn("could not record api key use", slog.String("key_id", id), slog.Any("error", err))
		}
	}()
}

// apiKeyOf returns the key that authenticated the request, or nil (public routes, emulator).
func apiKeyOf(r *http.Request) *domain.APIKey {
	k, _ := r.Context().Value(apiKeyCtx).(*domain.APIKey)
	return k
}
