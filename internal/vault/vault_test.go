package vault

import (
	"context"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/dbtest"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
)

// testStores opens an in-memory SQLite store and, when TEST_DATABASE_URL is set, a PostgreSQL
// one, each with a workspace of its own.
func testStores(t *testing.T) map[string]struct {
	st *store.Store
	ws string
} {
	t.Helper()
	ctx := context.Background()
	urls := map[string]string{"sqlite": "memory"}
	if u := dbtest.PostgresURL(t); u != "" {
		urls["postgres"] = u
	}
	out := map[string]struct {
		st *store.Store
		ws string
	}{}
	for d, u := range urls {
		st, err := store.Open(ctx, u)
		if err != nil {
			t.Fatalf("open %s: %v", d, err)
		}
		t.Cleanup(func() { st.Close() })
		ws := store.NewID()
		if _, err := st.WorkspaceCreate(ctx, &domain.Workspace{ID: ws, Name: "vault test", Slug: "vault-" + strings.ToLower(ws)}); err != nil {
			t.Fatal(err)
		}
		out[d] = struct {
			st *store.Store
			ws string
		}{st, ws}
	}
	return out
}

func TestCredentials(t *testing.T) {
	for d, s := range testStores(t) {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			box := secretbox.NewRandom()
			const value = "sk-proj-0123456789abcdef"
			c, err := CredentialCreate(ctx, s.st, &domain.Credential{WorkspaceID: s.ws, Name: "old", Type: "api_key", Provider: "openai"}, value, box)
			if err != nil {
				t.Fatal(err)
			}
			t.Run("sealed in the store, opened above it", func(t *testing.T) {
				sealed, err := s.st.CredentialSealed(ctx, s.ws, c.ID)
				if err != nil || strings.Contains(sealed, value) || c.MaskedValue != secretbox.Mask(value) {
					t.Fatalf("stored %q, mask %q: %v", sealed, c.MaskedValue, err)
				}
				if v, err := CredentialReveal(ctx, s.st, s.ws, c.ID, box); err != nil || v != value {
					t.Fatalf("reveal: %q %v", v, err)
				}
				if _, err := CredentialReveal(ctx, s.st, s.ws, c.ID, secretbox.NewRandom()); err == nil {
					t.Fatal("another key opened the value")
				}
				if got, v, err := CredentialForRun(ctx, s.st, s.ws, "", "openai", box); err != nil || got.ID != c.ID || v != value {
					t.Fatalf("for run: %v %q %v", got, v, err)
				}
				if _, vs, err := CredentialPool(ctx, s.st, s.ws, "openai", box); err != nil || len(vs) != 1 || vs[0] != value {
					t.Fatalf("pool: %q %v", vs, err)
				}
			})
			t.Run("masks refreshed with the current rule", func(t *testing.T) {
				// As an older masking rule left it.
				if err := s.st.CredentialMaskSet(ctx, s.ws, c.ID, "sk-p…cdef"); err != nil {
					t.Fatal(err)
				}
				n, err := CredentialMasksRefresh(ctx, s.st, box)
				if err != nil || n < 1 {
					t.Fatalf("refreshed %d: %v", n, err)
				}
				got, _ := s.st.CredentialGet(ctx, s.ws, c.ID)
				if got.MaskedValue != "sk-…cdef" {
					t.Fatalf("mask %q", got.MaskedValue)
				}
				if n, _ := CredentialMasksRefresh(ctx, s.st, box); n != 0 {
					t.Fatalf("a second pass changed %d", n)
				}
			})
			t.Run("a new value is sealed again", func(t *testing.T) {
				nv := "sk-rotated-abcdefghijklmnopqrstuvwxyz-1234"
				if _, err := CredentialUpdate(ctx, s.st, s.ws, c.ID, domain.CredentialPatch{Value: &nv}, box); err != nil {
					t.Fatal(err)
				}
				if v, err := CredentialReveal(ctx, s.st, s.ws, c.ID, box); err != nil || v != nv {
					t.Fatalf("reveal after rotation: %q %v", v, err)
				}
				if _, err := CredentialUpdate(ctx, s.st, s.ws, c.ID, domain.CredentialPatch{Value: &nv}, nil); err == nil {
					t.Fatal("updated a value without a box")
				}
			})
		})
	}
}
