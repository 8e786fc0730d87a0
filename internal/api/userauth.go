package api

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

const userCtx ctxKey = 200

// user is the logged-in user a bearer token names, with their role in the request's
// workspace (both empty on routes that act on no single workspace).
type user struct {
	id, email   string
	workspaceID string
	role        string
}

var errBadToken = errorf(http.StatusUnauthorized, "invalid or expired token: log in again with POST /api/v1/auth/login")

// memberScopes is what the member role grants: every scope but "*", so members cannot
// manage keys or the workspace. It is computed on first use, once routes.go's init has
// registered the scopes of the route table.
var memberScopes = sync.OnceValue(func() []string {
	var out []string
	for _, sc := range auth.Scopes() {
		if sc != auth.ScopeAll {
			out = append(out, sc)
		}
	}
	return out
})

// roleScopes is what a membership role grants.
func roleScopes(role string) []string {
	if role == domain.RoleOwner || role == domain.RoleAdmin {
		return []string{auth.ScopeAll}
	}
	return memberScopes()
}

// authenticateUser checks an `Authorization: Bearer <jwt>` request: the token, then, on a
// workspace route, the X-Workspace-ID header (the workspace's id or slug) and the caller's
// membership and role there.
func (s *Server) authenticateUser(r *http.Request, rt route, authz string) (*http.Request, error) {
	tok, ok := bearerToken(authz)
	if !ok {
		return nil, errorf(http.StatusUnauthorized, "unsupported Authorization header: send Authorization: Bearer <token>")
	}
	u, err := s.bearerUser(r.Context(), tok)
	if err != nil {
		return nil, err
	}
	if !rt.anyWorkspace && !rt.userOnly {
		ws := strings.TrimSpace(r.Header.Get("X-Workspace-ID"))
		if ws == "" {
			return nil, badRequest("missing X-Workspace-ID header: a request with a bearer token must name the workspace it acts in")
		}
		id, role, err := s.store.MembershipFind(r.Context(), ws, u.id)
		if store.IsNotFound(err) {
			// The same answer whether or not the workspace exists.
			return nil, errorf(http.StatusForbidden, "you are not a member of workspace %s", ws)
		}
		if err != nil {
			return nil, err
		}
		for _, scope := range []string{rt.scope, rt.also} {
			if scope != "" && !grants(roleScopes(role), scope) {
				return nil, errorf(http.StatusForbidden, "your role %s in workspace %s lacks the scope %s required by %s %s", role, ws, scope, rt.method, rt.path)
			}
		}
		u.workspaceID, u.role = id, role
	}
	return r.WithContext(context.WithValue(r.Context(), userCtx, u)), nil
}

// bearerUser returns the user a bearer token names: a login token signed by this server,
// else, with a JWKS configured, a token of the identity provider whose email claim belongs
// to an existing user.
func (s *Server) bearerUser(ctx context.Context, tok string) (*user, error) {
	if len(s.cfg.JWTSecret) > 0 {
		if c, err := auth.ParseToken(s.cfg.JWTSecret, tok); err == nil {
			return &user{id: c.Subject, email: c.Email}, nil
		}
	}
	if s.jwks == nil {
		return nil, errBadToken
	}
	email, err := s.jwks.verify(ctx, tok)
	if err != nil {
		return nil, errBadToken
	}
	su, err := s.store.UserByEmail(ctx, email)
	if store.IsNotFound(err) {
		return nil, errBadToken
	}
	if err != nil {
		return nil, err
	}
	return &user{id: su.ID, email: su.Email}, nil
}

// userOf returns the logged-in user of a bearer-token request, or nil.
func userOf(r *http.Request) *user {
	u, _ := r.Context().Value(userCtx).(*user)
	return u
}
