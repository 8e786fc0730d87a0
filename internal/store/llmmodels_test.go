package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/secretbox"
)

func TestWorkspaceModels(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		mustModel(t, s) // gpt-4o in the catalog
		a, b := mustWorkspace(t, s, "a"), mustWorkspace(t, s, "b")
		local := &domain.LLMModel{ID: "llama3.1:8b", Provider: "ollama", Name: "Llama", ContextWindow: 8192, InputPricePerMillion: 0.5, Capabilities: domain.Strings{"chat"}}
		m, err := s.LLMModelCreate(ctx, a, local)
		if err != nil {
			t.Fatal(err)
		}
		if m.Source != domain.ModelSourceWorkspace || m.ContextWindow != 8192 || m.InputPricePerMillion != 0.5 || m.CreatedAt.IsZero() {
			t.Fatalf("created %+v", m)
		}
		var ce *ConflictError
		if _, err := s.LLMModelCreate(ctx, a, local); !errors.As(err, &ce) {
			t.Fatalf("duplicate: %v", err)
		}
		if _, err := s.LLMModelCreate(ctx, a, &domain.LLMModel{ID: "gpt-4o", Provider: "openai", Name: "mine", ContextWindow: 1, Capabilities: domain.Strings{}}); !errors.As(err, &ce) {
			t.Fatalf("catalog id: %v", err)
		}
		// Another workspace may register the same id; neither sees the other's.
		if _, err := s.LLMModelCreate(ctx, b, &domain.LLMModel{ID: "llama3.1:8b", Provider: "openai_compatible", Name: "B's", ContextWindow: 4096, Capabilities: domain.Strings{}}); err != nil {
			t.Fatal(err)
		}
		if got, err := s.LLMModelGet(ctx, b, "llama3.1:8b"); err != nil || got.Provider != "openai_compatible" {
			t.Fatalf("b's model: %+v %v", got, err)
		}
		if got, err := s.LLMModelGet(ctx, a, "gpt-4o"); err != nil || got.Source != domain.ModelSourceCatalog {
			t.Fatalf("catalog from a: %+v %v", got, err)
		}
		list, total, err := s.LLMModelList(ctx, a, domain.LLMModelFilter{}, domain.Page{Page: 1, Limit: 10})
		if err != nil || total != 2 || len(list) != 2 || list[0].ID != "llama3.1:8b" || list[1].ID != "gpt-4o" {
			t.Fatalf("list: %d %v %v", total, list, err) // ordered by provider: ollama < openai
		}
		if _, total, _ := s.LLMModelList(ctx, a, domain.LLMModelFilter{Source: domain.ModelSourceWorkspace}, domain.Page{Page: 1, Limit: 10}); total != 1 {
			t.Fatalf("workspace models: %d", total)
		}
		if _, total, _ := s.LLMModelList(ctx, a, domain.LLMModelFilter{Source: domain.ModelSourceCatalog, Provider: "ollama"}, domain.Page{Page: 1, Limit: 10}); total != 0 {
			t.Fatalf("catalog ollama models: %d", total)
		}
		if err := s.CheckRefs(ctx, a, domain.KindLLMModel, "config.model", "llama3.1:8b", "gpt-4o"); err != nil {
			t.Fatal(err)
		}
		if err := s.CheckRefs(ctx, mustWorkspace(t, s, "c"), domain.KindLLMModel, "config.model", "llama3.1:8b"); err == nil {
			t.Fatal("a workspace sees another's model")
		}
		window, caps := 16384, domain.Strings{"chat", "tools"}
		up, err := s.LLMModelUpdate(ctx, a, "llama3.1:8b", domain.LLMModelPatch{ContextWindow: &window, Capabilities: &caps})
		if err != nil || up.ContextWindow != 16384 || len(up.Capabilities) != 2 || up.Name != "Llama" {
			t.Fatalf("update: %+v %v", up, err)
		}
		if _, err := s.LLMModelUpdate(ctx, a, "gpt-4o", domain.LLMModelPatch{ContextWindow: &window}); !IsNotFound(err) {
			t.Fatalf("updating the catalog through a workspace: %v", err)
		}
		if _, err := s.LLMModelDelete(ctx, a, "llama3.1:8b"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.LLMModelGet(ctx, a, "llama3.1:8b"); !IsNotFound(err) {
			t.Fatalf("after delete: %v", err)
		}
		if got, err := s.LLMModelGet(ctx, b, "llama3.1:8b"); err != nil || got.Name != "B's" {
			t.Fatalf("b's model after a's delete: %+v %v", got, err)
		}
	})
}

func TestCredentialForProviderAndValidation(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "a")
		box := secretbox.NewRandom()
		if _, err := s.CredentialForProvider(ctx, ws, "openai"); !IsNotFound(err) {
			t.Fatalf("none yet: %v", err)
		}
		mk := func(name string, md domain.JSONObject) *domain.Credential {
			c, err := credentialCreate(ctx, s, &domain.Credential{WorkspaceID: ws, Name: name, Type: "api_key", Provider: "openai", Metadata: md}, "sk-"+name, box)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		first := mk("first", domain.JSONObject{"default": true})
		time.Sleep(2 * time.Millisecond) // "newest" is by created_at, which has millisecond resolution
		second := mk("second", nil)
		if c, err := s.CredentialForProvider(ctx, ws, "openai"); err != nil || c.ID != first.ID {
			t.Fatalf("the default one: %+v %v", c, err)
		}
		if _, err := credentialUpdate(ctx, s, ws, first.ID, domain.CredentialPatch{Metadata: &domain.JSONObject{}}, box); err != nil {
			t.Fatal(err)
		}
		if c, err := s.CredentialForProvider(ctx, ws, "openai"); err != nil || c.ID != second.ID {
			t.Fatalf("the newest without a default: %+v %v", c, err)
		}
		if second.Valid != nil || second.LastValidatedAt != nil {
			t.Fatalf("validated before a validation: %+v", second)
		}
		at := domain.Now()
		c, err := s.CredentialSetValidation(ctx, ws, second.ID, false, "openai (401): bad key", at)
		if err != nil || c.Valid == nil || *c.Valid || c.LastValidatedAt == nil || !c.LastValidatedAt.Equal(at.Time) || c.ValidationMessage != "openai (401): bad key" {
			t.Fatalf("validation: %+v %v", c, err)
		}
		if c, _ = s.CredentialSetValidation(ctx, ws, second.ID, true, "ok", domain.Now()); c.Valid == nil || !*c.Valid {
			t.Fatalf("valid again: %+v", c)
		}
		if _, err := s.CredentialSetValidation(ctx, mustWorkspace(t, s, "b"), second.ID, true, "", domain.Now()); !IsNotFound(err) {
			t.Fatalf("another workspace: %v", err)
		}
	})
}
