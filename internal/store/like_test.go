package store

import (
	"context"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
)

// TestLikeFiltersMatchLiterally: "%", "_" and "\" in a free-text filter, a tag or a
// capability match themselves, not any text, on both dialects.
func TestLikeFiltersMatchLiterally(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "like")
		mustModel(t, s)
		for _, name := range []string{"100% sure", "1000 sure", "snake_case", "snakeXcase", `back\slash`, "backslash"} {
			if _, err := s.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: name, Type: "simple", Status: "active"}, &domain.AgentConfig{Model: "gpt-4o"}, ""); err != nil {
				t.Fatal(err)
			}
		}
		for q, want := range map[string]string{"100%": "100% sure", "e_c": "snake_case", `k\s`: `back\slash`, "%": "100% sure", "_": "snake_case"} {
			got, total, err := s.AgentList(ctx, ws, domain.AgentFilter{Query: q}, domain.Page{Page: 1, Limit: 20})
			if err != nil || total != 1 || got[0].Name != want {
				t.Errorf("agents q=%q: %d %v %v, want only %q", q, total, names(got, func(a *domain.Agent) string { return a.Name }), err, want)
			}
		}

		for name, tags := range map[string]domain.Strings{"P1": {"a_b"}, "P2": {"axb"}, "P3": {"50%"}} {
			if _, err := s.PromptCreate(ctx, &domain.Prompt{WorkspaceID: ws, Name: name, Tags: tags, Metadata: domain.JSONObject{}}, nil); err != nil {
				t.Fatal(err)
			}
		}
		for tag, want := range map[string]int{"a_b": 1, "a%": 0, "50%": 1, "5_%": 0, "A_B": 1} {
			_, total, err := s.PromptList(ctx, ws, domain.PromptFilter{Tag: tag}, domain.Page{Page: 1, Limit: 20})
			if err != nil || total != want {
				t.Errorf("prompts tag=%q: %d %v, want %d", tag, total, err, want)
			}
		}

		for id, caps := range map[string]domain.Strings{"m1": {"to_ls"}, "m2": {"toxls"}, "m3": {"x%y"}} {
			if _, err := s.LLMModelCreate(ctx, ws, &domain.LLMModel{ID: id, Provider: "ollama", Name: id, ContextWindow: 8192, Capabilities: caps}); err != nil {
				t.Fatal(err)
			}
		}
		for capability, want := range map[string]string{"to_ls": "m1", "x%y": "m3"} {
			got, total, err := s.LLMModelList(ctx, ws, domain.LLMModelFilter{Capability: capability, Source: domain.ModelSourceWorkspace}, domain.Page{Page: 1, Limit: 20})
			if err != nil || total != 1 || got[0].ID != want {
				t.Errorf("models capability=%q: %d %v %v, want only %s", capability, total, names(got, func(m *domain.LLMModel) string { return m.ID }), err, want)
			}
		}
		for _, capability := range []string{"to%", "x_y", `%`, `_`} {
			_, total, err := s.LLMModelList(ctx, ws, domain.LLMModelFilter{Capability: capability, Source: domain.ModelSourceWorkspace}, domain.Page{Page: 1, Limit: 20})
			if err != nil || total != 0 {
				t.Errorf("models capability=%q: %d %v, want none", capability, total, err)
			}
		}
	})
}

func names[T any](items []*T, name func(*T) string) string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = name(it)
	}
	return strings.Join(out, ", ")
}
