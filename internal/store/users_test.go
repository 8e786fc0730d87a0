package store

import (
	"context"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
)

func TestUsersAndMemberships(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws, other := mustWorkspace(t, s, "team"), mustWorkspace(t, s, "elsewhere")
		u, err := s.UserCreate(ctx, &domain.User{Email: " Ada@Example.COM ", PasswordHash: "h"})
		if err != nil || u.Email != "ada@example.com" || u.ID == "" || u.CreatedAt.IsZero() {
			t.Fatalf("create: %+v %v", u, err)
		}
		if _, err := s.UserCreate(ctx, &domain.User{Email: "ADA@example.com", PasswordHash: "h"}); err == nil {
			t.Fatal("a duplicate email (other case) was accepted")
		}
		got, err := s.UserByEmail(ctx, "ADA@EXAMPLE.com")
		if err != nil || got.ID != u.ID || got.PasswordHash != "h" {
			t.Fatalf("by email: %+v %v", got, err)
		}
		if _, err := s.UserByEmail(ctx, "nobody@example.com"); !IsNotFound(err) {
			t.Fatalf("unknown email: %v", err)
		}
		if _, err := s.MembershipRole(ctx, ws, u.ID); !IsNotFound(err) {
			t.Fatalf("role before joining: %v", err)
		}
		if err := s.MembershipAdd(ctx, ws, u.ID, "boss"); err == nil {
			t.Fatal("an unknown role was accepted")
		}
		if err := s.MembershipAdd(ctx, ws, u.ID, domain.RoleMember); err != nil {
			t.Fatal(err)
		}
		if err := s.MembershipAdd(ctx, ws, u.ID, domain.RoleAdmin); err != nil {
			t.Fatal(err)
		}
		if role, err := s.MembershipRole(ctx, ws, u.ID); err != nil || role != domain.RoleAdmin {
			t.Fatalf("role: %q %v", role, err)
		}
		if _, err := s.MembershipRole(ctx, other, u.ID); !IsNotFound(err) {
			t.Fatalf("role elsewhere: %v", err)
		}
		if err := s.MembershipAdd(ctx, "nope", u.ID, domain.RoleMember); err == nil {
			t.Fatal("a membership of a missing workspace was accepted")
		}
		mine, total, err := s.WorkspaceList(ctx, u.ID, domain.Page{Page: 1, Limit: 20})
		if err != nil || total != 1 || len(mine) != 1 || mine[0].ID != ws {
			t.Fatalf("user's workspaces: %v %d %v", mine, total, err)
		}
		all, total, err := s.WorkspaceList(ctx, "", domain.Page{Page: 1, Limit: 1})
		if err != nil || total != 2 || len(all) != 1 {
			t.Fatalf("all workspaces: %v %d %v", all, total, err)
		}
	})
}
