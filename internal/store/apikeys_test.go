package store

import (
	"context"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

func TestAPIKeys(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws, other := mustWorkspace(t, s, "keys"), mustWorkspace(t, s, "other")
		if n, err := s.APIKeyCount(ctx); err != nil || n != 0 {
			t.Fatalf("count on an empty store: %d %v", n, err)
		}
		exp := domain.Time{Time: time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)}
		k, err := s.APIKeyCreate(ctx, &domain.APIKey{WorkspaceID: ws, Name: "ci", KeyPrefix: "ap_abcdefgh", Scopes: domain.Strings{"agents:read"},
			AllowedIPs: domain.Strings{"10.0.0.0/8"}, ExpiresAt: &exp}, "hash-1")
		if err != nil {
			t.Fatal(err)
		}
		if k.Name != "ci" || len(k.Scopes) != 1 || k.AllowedIPs[0] != "10.0.0.0/8" || len(k.AllowedOrigins) != 0 ||
			k.ExpiresAt == nil || !k.ExpiresAt.Equal(exp.Time) || k.LastUsedAt != nil || k.CreatedAt.IsZero() {
			t.Fatalf("created: %+v", k)
		}
		if _, err := s.APIKeyCreate(ctx, &domain.APIKey{WorkspaceID: ws, Name: "dup", KeyPrefix: "x"}, "hash-1"); err == nil {
			t.Fatal("a duplicate hash was accepted")
		}
		if _, err := s.APIKeyGet(ctx, other, k.ID); !IsNotFound(err) {
			t.Fatalf("get from another workspace: %v", err)
		}
		got, err := s.APIKeyByHash(ctx, "hash-1")
		if err != nil || got.ID != k.ID || got.WorkspaceID != ws {
			t.Fatalf("by hash: %+v %v", got, err)
		}
		at := domain.Now()
		if err := s.APIKeyTouch(ctx, k.ID, at); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.APIKeyGet(ctx, ws, k.ID); got.LastUsedAt == nil || !got.LastUsedAt.Equal(at.Time) {
			t.Fatalf("last_used_at: %+v", got.LastUsedAt)
		}
		rot, err := s.APIKeyRotate(ctx, ws, k.ID, "ap_newnewne", "hash-2")
		if err != nil || rot.KeyPrefix != "ap_newnewne" {
			t.Fatalf("rotate: %+v %v", rot, err)
		}
		if _, err := s.APIKeyByHash(ctx, "hash-1"); !IsNotFound(err) {
			t.Fatalf("old hash after rotate: %v", err)
		}
		if _, err := s.APIKeyRotate(ctx, other, k.ID, "p", "hash-3"); !IsNotFound(err) {
			t.Fatalf("rotate from another workspace: %v", err)
		}
		second, err := s.APIKeyCreate(ctx, &domain.APIKey{WorkspaceID: ws, Name: "second", KeyPrefix: "ap_2", Scopes: domain.Strings{"*"}}, "hash-4")
		if err != nil {
			t.Fatal(err)
		}
		items, total, err := s.APIKeyList(ctx, ws, domain.Page{Page: 1, Limit: 20})
		if err != nil || total != 2 || items[0].ID != second.ID {
			t.Fatalf("list: %d %v", total, err)
		}
		rev, err := s.APIKeyRevoke(ctx, ws, k.ID)
		if err != nil || rev.ID != k.ID {
			t.Fatalf("revoke: %+v %v", rev, err)
		}
		if _, err := s.APIKeyGet(ctx, ws, k.ID); !IsNotFound(err) {
			t.Fatalf("get revoked: %v", err)
		}
		if _, err := s.APIKeyByHash(ctx, "hash-2"); !IsNotFound(err) {
			t.Fatalf("by hash revoked: %v", err)
		}
		if _, err := s.APIKeyRevoke(ctx, ws, k.ID); !IsNotFound(err) {
			t.Fatalf("revoke twice: %v", err)
		}
		if _, err := s.APIKeyRotate(ctx, ws, k.ID, "p", "hash-5"); !IsNotFound(err) {
			t.Fatalf("rotate revoked: %v", err)
		}
		if _, total, _ := s.APIKeyList(ctx, ws, domain.Page{Page: 1, Limit: 20}); total != 1 {
			t.Fatalf("list after revoke: %d", total)
		}
		if n, err := s.APIKeyCount(ctx); err != nil || n != 2 {
			t.Fatalf("count counts revoked keys too: %d %v", n, err)
		}
		if stats, _ := s.StoreStats(ctx); stats["api_keys"] != 2 {
			t.Fatalf("stats: %v", stats)
		}
	})
}

// Migration 6 retires the executions:write scope: a key that held it holds executions:read,
// which the spec says allows cancel, approve and deny.
func TestMigrationRetiresExecutionsWrite(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		p, err := s.migrations()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.DownTo(ctx, 5); err != nil {
			t.Fatal(err)
		}
		ws := mustWorkspace(t, s, "a")
		k, err := s.APIKeyCreate(ctx, &domain.APIKey{WorkspaceID: ws, Name: "old", KeyPrefix: "ap_old", Scopes: domain.Strings{"agents:read", "executions:write"}}, "hash-old")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Up(ctx); err != nil {
			t.Fatal(err)
		}
		got, err := s.APIKeyGet(ctx, ws, k.ID)
		if err != nil || len(got.Scopes) != 2 || got.Scopes[0] != "agents:read" || got.Scopes[1] != "executions:read" {
			t.Fatalf("scopes after the migration: %+v %v", got, err)
		}
	})
}
