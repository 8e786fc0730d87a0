package api

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/store"
)

type loginRequest struct {
	Email    string `json:"email" doc:"The user's email (case-insensitive)."`
	Password string `json:"password"`
}

// LoginUser is the user a login token was issued to.
type LoginUser struct {
	ID    string `json:"id"`
	Email string `json:"email"`
}

// LoginToken is a login token, who it is for and the workspaces they may act in.
type LoginToken struct {
	Token      string              `json:"token" doc:"An HS256 JWT; send it as Authorization: Bearer <token>, with X-Workspace-ID (a workspace's id or slug) on workspace routes."`
	ExpiresAt  store.Time          `json:"expires_at"`
	User       LoginUser           `json:"user"`
	Workspaces []*store.Membership `json:"workspaces" doc:"The workspaces the user is a member of, with their role in each."`
}

type workspaceCreateRequest struct {
	Name string `json:"name" maxLength:"200" doc:"Display name."`
	Slug string `json:"slug,omitempty" doc:"Unique URL-safe name (lower-case letters, digits and dashes); derived from name when omitted."`
}

var slugRe = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

func (s *Server) workspaceRoutes() []route {
	const tag, scope = "Workspaces", auth.ScopeAll
	return []route{
		{method: "POST", path: v1 + "/auth/login", op: "login", tag: "Auth", server: true, summary: "Log in with an email and a password",
			desc: "Returns a JWT valid for 12 hours and the user's workspaces (id, slug, name, role). A wrong email or password gives the same 401. " +
				"Failed logins are limited per email (10, then one a minute) and per client address (30, then one every 2 s; an IPv6 /64 counts as one address), " +
				"across every node: over either limit the answer is a 429 with Retry-After, before any password is checked. A successful login does not count. " +
				"Password checks run a few at a time per node; when too many wait, the answer is a 429 with Retry-After: 1.",
			body: loginRequest{}, resp: LoginToken{},
			errs: []int{http.StatusUnauthorized, http.StatusTooManyRequests}, h: s.login},
		{method: "GET", path: v1 + "/workspaces", op: "listWorkspaces", tag: tag, scope: scope, server: true, anyWorkspace: true,
			summary: "List the caller's workspaces", desc: "A logged-in user sees the workspaces they are a member of; an API key sees its own.",
			list: true, resp: store.Workspace{}, nocache: true, h: s.listWorkspaces},
		{method: "POST", path: v1 + "/workspaces", op: "createWorkspace", tag: tag, scope: scope, server: true, userOnly: true,
			summary: "Create a workspace", desc: "Logged-in users only; the caller becomes its owner.", body: workspaceCreateRequest{},
			resp: store.Workspace{}, status: http.StatusCreated, errs: []int{http.StatusConflict}, h: s.createWorkspace},
		{method: "GET", path: v1 + "/workspaces/{id}", op: "getWorkspace", tag: tag, scope: scope, server: true, anyWorkspace: true,
			summary: "Get a workspace", desc: "404 unless the caller is a member (or it is the API key's own).", resp: store.Workspace{},
			nocache: true, h: s.getWorkspace},
	}
}

// dummyHash is verified against when the email is unknown, so an unknown email takes as long
// as a wrong password.
var dummyHash = sync.OnceValues(func() (string, error) {
	return auth.HashPassword(context.Background(), "agentplane: no such user")
})

var errBadLogin = errorf(http.StatusUnauthorized, "wrong email or password")

func (s *Server) login(w http.ResponseWriter, r *http.Request) error {
	var req loginRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := firstErr(required("email", req.Email), required("password", req.Password)); err != nil {
		return err
	}
	if len(s.cfg.JWTSecret) == 0 {
		return errorf(http.StatusUnauthorized, "login is not enabled on this server")
	}
	refund, err := s.loginCharge(r.Context(), r, req.Email)
	if err != nil {
		return err
	}
	u, err := s.store.UserByEmail(r.Context(), req.Email)
	hash := ""
	switch {
	case store.IsNotFound(err):
		if hash, err = dummyHash(); err != nil {
			return err
		}
	case err != nil:
		return err
	default:
		hash = u.PasswordHash
	}
	if err := auth.VerifyPassword(r.Context(), req.Password, hash); err != nil {
		if errors.Is(err, auth.ErrPasswordMismatch) || (u == nil && !errors.Is(err, auth.ErrBusy)) {
			return errBadLogin
		}
		refund() // not checked: no guess was made
		return loginBusy(err)
	}
	if u == nil {
		return errBadLogin
	}
	refund()
	tok, exp, err := auth.SignToken(s.cfg.JWTSecret, u.ID, u.Email, time.Now())
	if err != nil {
		return err
	}
	memberships, err := s.store.MembershipList(r.Context(), u.ID)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, LoginToken{Token: tok, ExpiresAt: store.Time{Time: exp.UTC().Truncate(time.Millisecond)},
		User: LoginUser{ID: u.ID, Email: u.Email}, Workspaces: memberships})
	return nil
}

func (s *Server) listWorkspaces(w http.ResponseWriter, r *http.Request) error {
	p, err := pageParams(r)
	if err != nil {
		return err
	}
	if u := userOf(r); u != nil {
		items, total, err := s.store.WorkspaceList(r.Context(), u.id, p)
		if err != nil {
			return err
		}
		writeList(w, items, p, total)
		return nil
	}
	items := []*store.Workspace{}
	if p.Page == 1 {
		ws, err := s.store.WorkspaceGet(r.Context(), s.workspace(r))
		if err != nil {
			return err
		}
		items = append(items, ws)
	}
	writeList(w, items, p, 1)
	return nil
}

func (s *Server) getWorkspace(w http.ResponseWriter, r *http.Request) error {
	id := pathID(r, "id")
	if u := userOf(r); u != nil {
		if _, err := s.store.MembershipRole(r.Context(), id, u.id); err != nil {
			if store.IsNotFound(err) {
				return notFound("workspace", id)
			}
			return err
		}
	} else if id != s.workspace(r) {
		return notFound("workspace", id)
	}
	ws, err := s.store.WorkspaceGet(r.Context(), id)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, ws)
	return nil
}

func (s *Server) createWorkspace(w http.ResponseWriter, r *http.Request) error {
	u := userOf(r)
	if u == nil {
		return errorf(http.StatusForbidden, "only logged-in users can create workspaces")
	}
	var req workspaceCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	name := strings.TrimSpace(req.Name)
	if err := firstErr(required("name", name), maxLen("name", name, 200)); err != nil {
		return err
	}
	slug := strings.TrimSpace(req.Slug)
	if slug == "" {
		slug = slugify(name)
	}
	if !slugRe.MatchString(slug) {
		return invalid("slug", "must be 1 to 63 lower-case letters, digits and dashes, starting with a letter or digit; got %q", slug)
	}
	var ws *store.Workspace
	err := s.store.InTx(r.Context(), func(tx *store.Store) error {
		var err error
		if ws, err = tx.WorkspaceCreate(r.Context(), &store.Workspace{Name: name, Slug: slug}); err != nil {
			return err
		}
		return tx.MembershipAdd(r.Context(), ws.ID, u.id, store.RoleOwner)
	})
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, ws)
	return nil
}

// slugify turns a name into a slug: lower-case, runs of anything else than letters and
// digits become one dash.
func slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(name) {
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
			b.WriteRune(c)
			dash = false
		} else if b.Len() > 0 && !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.TrimSuffix(b.String(), "-")
	if len(out) > 63 {
		out = strings.TrimSuffix(out[:63], "-")
	}
	return out
}
