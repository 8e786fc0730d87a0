package api

import (
	"context"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/auth/authtest"
	"github.com/agentplane/agentplane/internal/domain"
)

// newUser stores a user with the password hash and, when role is set, a membership of ws.
func newUser(t *testing.T, e *testEnv, email, hash, ws, role string) *domain.User {
	t.Helper()
	ctx := context.Background()
	u, err := e.store.UserCreate(ctx, &domain.User{Email: email, PasswordHash: hash})
	if err != nil {
		t.Fatal(err)
	}
	if role != "" {
		if err := e.store.MembershipAdd(ctx, ws, u.ID, role); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

func token(t *testing.T, u *domain.User) string {
	t.Helper()
	tok, _, err := auth.SignToken(testJWTSecret, u.ID, u.Email, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// bearer is the headers of a bearer-token request (no API key), in ws when it is set.
func bearer(tok, ws string) map[string]string {
	h := map[string]string{"X-API-Key": "", "Authorization": "Bearer " + tok}
	if ws != "" {
		h["X-Workspace-ID"] = ws
	}
	return h
}

func TestLoginAndBearerAuth(t *testing.T) {
	e := newServerEnv(t)
	hash := authtest.PasswordHash(t, "s3cret-pass")
	member := newUser(t, e, "Member@Example.com", hash, e.ws, domain.RoleMember)
	admin := newUser(t, e, "admin@example.com", hash, e.ws, domain.RoleAdmin)
	outsider := newUser(t, e, "outsider@example.com", hash, "", "")
	memberTok, adminTok, outsiderTok := token(t, member), token(t, admin), token(t, outsider)
	expired, _, _ := auth.SignToken(testJWTSecret, member.ID, member.Email, time.Now().Add(-13*time.Hour))
	forged, _, _ := auth.SignToken([]byte("another secret, just as long...."), member.ID, member.Email, time.Now())
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"sub": member.ID, "exp": time.Now().Add(time.Hour).Unix()}).
		SignedString(jwt.UnsafeAllowNoneSignatureType)
	const login = "/api/v1/auth/login"
	noKey := map[string]string{"X-API-Key": ""}
	e.run([]scenario{
		{name: "login", method: "POST", path: login, header: noKey, body: `{"email":"MEMBER@example.com","password":"s3cret-pass"}`, status: 200,
			fields: map[string]any{"data.user.id": member.ID, "data.user.email": "member@example.com"},
			check: func(t *testing.T, body map[string]any) {
				d := body["data"].(map[string]any)
				c, err := auth.ParseToken(testJWTSecret, d["token"].(string))
				if err != nil || c.Subject != member.ID || c.Email != "member@example.com" {
					t.Fatalf("token claims %+v %v", c, err)
				}
				exp, _ := time.Parse(time.RFC3339, d["expires_at"].(string))
				if d := time.Until(exp); d < 11*time.Hour || d > 12*time.Hour {
					t.Fatalf("expires in %s", d)
				}
			}},
		{name: "login wrong password", method: "POST", path: login, header: noKey, body: `{"email":"member@example.com","password":"nope"}`,
			status: 401, code: "unauthorized", message: "wrong email or password"},
		{name: "login unknown email", method: "POST", path: login, header: noKey, body: `{"email":"ghost@example.com","password":"s3cret-pass"}`,
			status: 401, code: "unauthorized", message: "wrong email or password"},
		{name: "login without email", method: "POST", path: login, header: noKey, body: `{"password":"x"}`, status: 422, message: "email"},
		{name: "login malformed", method: "POST", path: login, header: noKey, body: `{"email":1}`, status: 400, code: "bad_request"},

		{name: "bearer without workspace", method: "GET", path: "/api/v1/agents", header: bearer(memberTok, ""), status: 400, code: "bad_request", message: "X-Workspace-ID"},
		{name: "member in workspace", method: "GET", path: "/api/v1/agents", header: bearer(memberTok, e.ws), status: 200},
		{name: "member writes", method: "POST", path: "/api/v1/agents", header: bearer(memberTok, e.ws), body: `{"name":"by member","type":"simple"}`,
			status: 201, fields: map[string]any{"data.workspace_id": e.ws}},
		{name: "member lacks *", method: "GET", path: "/api/v1/api-keys", header: bearer(memberTok, e.ws), status: 403, code: "forbidden", message: "*"},
		{name: "admin manages keys", method: "GET", path: "/api/v1/api-keys", header: bearer(adminTok, e.ws), status: 200},
		{name: "non-member", method: "GET", path: "/api/v1/agents", header: bearer(outsiderTok, e.ws), status: 403, code: "forbidden", message: "not a member"},
		{name: "missing workspace is 403 too", method: "GET", path: "/api/v1/agents", header: bearer(memberTok, "2o0yqLDGdJdFRBTuhdfPNEZdAvZ"), status: 403, message: "not a member"},
		{name: "expired token", method: "GET", path: "/api/v1/agents", header: bearer(expired, e.ws), status: 401, code: "unauthorized"},
		{name: "garbage token", method: "GET", path: "/api/v1/agents", header: bearer("not.a.jwt", e.ws), status: 401, code: "unauthorized"},
		{name: "alg none", method: "GET", path: "/api/v1/agents", header: bearer(none, e.ws), status: 401, code: "unauthorized"},
		{name: "other secret", method: "GET", path: "/api/v1/agents", header: bearer(forged, e.ws), status: 401, code: "unauthorized"},
		{name: "basic auth", method: "GET", path: "/api/v1/agents", header: map[string]string{"X-API-Key": "", "Authorization": "Basic eDp5"}, status: 401},

		{name: "member's workspaces", method: "GET", path: "/api/v1/workspaces", header: bearer(memberTok, ""), status: 200,
			fields: map[string]any{"pagination.total": 1, "data.0.id": e.ws}},
		{name: "outsider's workspaces", method: "GET", path: "/api/v1/workspaces", header: bearer(outsiderTok, ""), status: 200,
			fields: map[string]any{"pagination.total": 0}},
		{name: "key's workspaces", method: "GET", path: "/api/v1/workspaces", status: 200, fields: map[string]any{"pagination.total": 1, "data.0.id": e.ws}},
		{name: "get own workspace", method: "GET", path: "/api/v1/workspaces/" + e.ws, header: bearer(memberTok, ""), status: 200, fields: map[string]any{"data.id": e.ws}},
		{name: "key gets its workspace", method: "GET", path: "/api/v1/workspaces/" + e.ws, status: 200, fields: map[string]any{"data.id": e.ws}},
		{name: "outsider gets workspace", method: "GET", path: "/api/v1/workspaces/" + e.ws, header: bearer(outsiderTok, ""), status: 404, code: "not_found"},
		{name: "key creates workspace", method: "POST", path: "/api/v1/workspaces", body: `{"name":"Nope"}`, status: 403, code: "forbidden"},
		{name: "anonymous creates workspace", method: "POST", path: "/api/v1/workspaces", header: map[string]string{"X-API-Key": ""}, body: `{"name":"Nope"}`,
			status: 401, code: "unauthorized", message: "missing credentials"},
		{name: "create invalid slug", method: "POST", path: "/api/v1/workspaces", header: bearer(outsiderTok, ""), body: `{"name":"X","slug":"Bad Slug"}`, status: 422, message: "slug"},
		{name: "create without name", method: "POST", path: "/api/v1/workspaces", header: bearer(outsiderTok, ""), body: `{}`, status: 422, message: "name"},
	})

	var created string
	e.run([]scenario{
		{name: "outsider creates workspace", method: "POST", path: "/api/v1/workspaces", header: bearer(outsiderTok, ""), body: `{"name":"Team B!"}`,
			status: 201, fields: map[string]any{"data.name": "Team B!", "data.slug": "team-b"},
			check: func(t *testing.T, body map[string]any) { created = body["data"].(map[string]any)["id"].(string) }},
		{name: "taken slug", method: "POST", path: "/api/v1/workspaces", header: bearer(outsiderTok, ""), body: `{"name":"Team B"}`, status: 409, code: "conflict"},
	})
	if role, err := e.store.MembershipRole(context.Background(), created, outsider.ID); err != nil || role != domain.RoleOwner {
		t.Fatalf("creator's role: %q %v", role, err)
	}
	e.run([]scenario{
		{name: "owner lists", method: "GET", path: "/api/v1/workspaces", header: bearer(outsiderTok, ""), status: 200,
			fields: map[string]any{"pagination.total": 1, "data.0.id": created}},
		{name: "owner gets", method: "GET", path: "/api/v1/workspaces/" + created, header: bearer(outsiderTok, ""), status: 200},
		{name: "owner manages keys there", method: "GET", path: "/api/v1/api-keys", header: bearer(outsiderTok, created), status: 200,
			fields: map[string]any{"pagination.total": 0}},
		{name: "owner still outside the first", method: "GET", path: "/api/v1/agents", header: bearer(outsiderTok, e.ws), status: 403},
		{name: "member cannot see it", method: "GET", path: "/api/v1/workspaces/" + created, header: bearer(memberTok, ""), status: 404},
		{name: "key cannot see it", method: "GET", path: "/api/v1/workspaces/" + created, status: 404},
	})
}

// TestEmulatorHasNoLogin: the emulator keeps accepting anything and has no user routes.
func TestEmulatorHasNoLogin(t *testing.T) {
	e := newTestEnv(t)
	e.run([]scenario{
		{name: "no login", method: "POST", path: "/api/v1/auth/login", body: `{"email":"a@b.c","password":"x"}`, status: 404, undocumented: true},
		{name: "no workspaces", method: "GET", path: "/api/v1/workspaces", status: 404, undocumented: true},
		{name: "bearer ignored", method: "GET", path: "/api/v1/agents", header: map[string]string{"Authorization": "Bearer junk"}, status: 200},
	})
}
