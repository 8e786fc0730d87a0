package api

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// LoginUser is the user a login token was issued to.
type LoginUser struct {
	ID    string `json:"id"`
	Email string `json:"email"`
}

// LoginToken is a login token, who it is for and the workspaces they may act in.
type LoginToken struct {
	Token      string               `json:"token" doc:"An HS256 JWT; send it as Authorization: Bearer <token>, with X-Workspace-ID (a workspace's id or slug) on workspace routes."`
	ExpiresAt  domain.Time          `json:"expires_at"`
	User       LoginUser            `json:"user"`
	Workspaces []*domain.Membership `json:"workspaces" doc:"The workspaces the user is a member of, with their role in each."`
}

type workspaceUpdateRequest struct {
	RetentionDays *int `json:"retention_days,omitempty" minimum:"0" maximum:"36500" doc:"Days executions and ingested traces are kept; 0 keeps them forever. At most the server's --max-retention-days when it is set (and then not 0)."`
}

// maxRetentionDays bounds retention_days (100 years) whatever the server's ceiling.
const maxRetentionDays = 36500

// Retention is the server's retention policy: what new workspaces keep, and the most any may.
type Retention struct {
	// Days is the retention_days of new workspaces (--retention-days); 0 keeps history forever.
	Days int
	// MaxDays caps retention_days (--max-retention-days); 0 is no ceiling. Under a ceiling,
	// forever (0) is over it.
	MaxDays int
}

// Check is nil when a workspace may keep history days under the policy, else a 422 naming
// retention_days and the ceiling.
func (p Retention) Check(days int) error {
	switch {
	case days < 0 || days > maxRetentionDays:
		return domain.Invalid("retention_days", "must be 0 (forever) to %d days; got %d", maxRetentionDays, days)
	case p.MaxDays > 0 && days == 0:
		return domain.Invalid("retention_days", "0 keeps history forever, over this server's ceiling of %d days (--max-retention-days); choose 1 to %d", p.MaxDays, p.MaxDays)
	case p.MaxDays > 0 && days > p.MaxDays:
		return domain.Invalid("retention_days", "%d days is over this server's ceiling of %d days (--max-retention-days)", days, p.MaxDays)
	}
	return nil
}

func (s *Server) workspaceRoutes() []route {
	const tag, scope = "Workspaces", auth.ScopeAll
	return []route{
		{method: "POST", path: v1 + "/auth/login", op: "login", tag: "Auth", server: true, summary: "Log in with an email and a password",
			body: domain.LoginRequest{}, resp: LoginToken{},
			errs: []int{http.StatusUnauthorized, http.StatusTooManyRequests}, h: s.login},
		{method: "GET", path: v1 + "/workspaces", op: "listWorkspaces", tag: tag, scope: scope, server: true, anyWorkspace: true,
			summary: "List the caller's workspaces",
			list:    true, resp: domain.Workspace{}, nocache: true, h: s.listWorkspaces},
		{method: "POST", path: v1 + "/workspaces", op: "createWorkspace", tag: tag, scope: scope, server: true, userOnly: true,
			summary: "Create a workspace", body: domain.WorkspaceCreateRequest{},
			resp: domain.Workspace{}, status: http.StatusCreated, errs: []int{http.StatusConflict}, h: s.createWorkspace},
		{method: "GET", path: v1 + "/workspaces/{id}", op: "getWorkspace", tag: tag, scope: scope, server: true, anyWorkspace: true,
			summary: "Get a workspace", resp: domain.Workspace{},
			nocache: true, h: s.getWorkspace},
		{method: "PATCH", path: v1 + "/workspaces/{id}", op: "updateWorkspace", tag: tag, scope: scope, server: true, anyWorkspace: true,
			summary: "Change a workspace's retention",
			body:    workspaceUpdateRequest{}, resp: domain.Workspace{}, errs: []int{http.StatusNotFound, http.StatusUnprocessableEntity}, h: s.updateWorkspace},
		{method: "DELETE", path: v1 + "/workspaces/{id}", op: "deleteWorkspace", tag: tag, scope: scope, server: true, anyWorkspace: true,
			summary: "Delete a workspace and all its data",
			resp:    domain.Workspace{}, status: http.StatusAccepted, errs: []int{http.StatusNotFound}, h: s.deleteWorkspace},
	}
}

// dummyHash is verified against when the email is unknown, so an unknown email takes as long
// as a wrong password.
var dummyHash = sync.OnceValues(func() (string, error) {
	return auth.HashPassword(context.Background(), "agentplane: no such user")
})

var errBadLogin = errorf(http.StatusUnauthorized, "wrong email or password")

func (s *Server) login(w http.ResponseWriter, r *http.Request) error {
	var req domain.LoginRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
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
	writeData(w, http.StatusOK, LoginToken{Token: tok, ExpiresAt: domain.Time{Time: exp.UTC().Truncate(time.Millisecond)},
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
	items := []*domain.Workspace{}
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
	var req domain.WorkspaceCreateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	req.Name, req.Slug = strings.TrimSpace(req.Name), strings.TrimSpace(req.Slug)
	if req.Slug == "" {
		req.Slug = slugify(req.Name)
	}
	if err := req.Validate(); err != nil {
		return err
	}
	name, slug := req.Name, req.Slug
	var ws *domain.Workspace
	err := s.store.InTx(r.Context(), func(tx *store.Store) error {
		var err error
		if ws, err = tx.WorkspaceCreate(r.Context(), &domain.Workspace{Name: name, Slug: slug, RetentionDays: s.cfg.Retention.Days}); err != nil {
			return err
		}
		return tx.MembershipAdd(r.Context(), ws.ID, u.id, domain.RoleOwner)
	})
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, ws)
	return nil
}

// workspaceRole checks that the caller may manage workspace id: a signed-in member whose
// role is one of roles, or an API key of the workspace (the route asks for the scope *). Not
// a member, or another workspace's key, is 404.
func (s *Server) workspaceRole(r *http.Request, id string, roles ...string) error {
	u := userOf(r)
	if u == nil {
		if id != s.workspace(r) {
			return notFound("workspace", id)
		}
		return nil
	}
	role, err := s.store.MembershipRole(r.Context(), id, u.id)
	if store.IsNotFound(err) {
		return notFound("workspace", id)
	}
	if err != nil {
		return err
	}
	if !slices.Contains(roles, role) {
		return errorf(http.StatusForbidden, "your role in workspace %s is %s; %s %s needs %s", id, role, r.Method, r.URL.Path, strings.Join(roles, " or "))
	}
	return nil
}

func (s *Server) updateWorkspace(w http.ResponseWriter, r *http.Request) error {
	id := pathID(r, "id")
	if err := s.workspaceRole(r, id, domain.RoleOwner, domain.RoleAdmin); err != nil {
		return err
	}
	var req workspaceUpdateRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if req.RetentionDays != nil {
		if err := s.cfg.Retention.Check(*req.RetentionDays); err != nil {
			return err
		}
	}
	ws, err := s.store.WorkspaceUpdate(r.Context(), id, req.RetentionDays)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, ws)
	return nil
}

func (s *Server) deleteWorkspace(w http.ResponseWriter, r *http.Request) error {
	id := pathID(r, "id")
	if userOf(r) == nil {
		if id != s.workspace(r) {
			return notFound("workspace", id)
		}
		return errorf(http.StatusForbidden, "an API key cannot delete its own workspace: an owner deletes it, signed in (Authorization: Bearer <token> from POST /api/v1/auth/login)")
	}
	if err := s.workspaceRole(r, id, domain.RoleOwner); err != nil {
		return err
	}
	ws, err := s.store.WorkspaceDelete(r.Context(), id)
	if err != nil {
		return err
	}
	s.engine.WorkspaceGone(id)
	writeData(w, http.StatusAccepted, ws)
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
