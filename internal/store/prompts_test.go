package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
)

const promptTestWS = "2o0yqLDGdJdFRBTuhdfPNEZdAvX"

// promptTestStores runs fn against a fresh in-memory SQLite store and, when TEST_DATABASE_URL
// names a PostgreSQL database, against a fresh schema of it that is dropped afterwards.
func promptTestStores(t *testing.T, fn func(t *testing.T, s *Store)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		s, err := Open(context.Background(), "memory")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		promptTestSetup(t, s)
		fn(t, s)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		s := openTestPostgres(t)
		promptTestSetup(t, s)
		fn(t, s)
	})
}

func promptTestSetup(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.WorkspaceCreate(ctx, &domain.Workspace{ID: promptTestWS, Name: "Test", Slug: "test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WorkspaceCreate(ctx, &domain.Workspace{ID: "other", Name: "Other", Slug: "other"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"gpt-4o", "gpt-4o-mini"} {
		if err := s.LLMModelUpsert(ctx, &domain.LLMModel{ID: id, Provider: "openai", Name: id, ContextWindow: 128000, MaxOutputTokens: 16384}); err != nil {
			t.Fatal(err)
		}
	}
}

func mustPrompt(t *testing.T, s *Store, p *domain.Prompt, first *domain.PromptVersion) *domain.Prompt {
	t.Helper()
	if p.WorkspaceID == "" {
		p.WorkspaceID = promptTestWS
	}
	out, err := s.PromptCreate(context.Background(), p, first)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustVersion(t *testing.T, s *Store, v *domain.PromptVersion) *domain.PromptVersion {
	t.Helper()
	if v.WorkspaceID == "" {
		v.WorkspaceID = promptTestWS
	}
	out, err := s.PromptVersionCreate(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func wantErr[E error](t *testing.T, err error, contains string) E {
	t.Helper()
	var target E
	if !errors.As(err, &target) {
		t.Fatalf("error %v (%T), want %T", err, err, target)
	}
	if !strings.Contains(err.Error(), contains) {
		t.Fatalf("error %q does not mention %q", err, contains)
	}
	return target
}

func TestPromptCreateGet(t *testing.T) {
	t.Parallel()
	promptTestStores(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		p := mustPrompt(t, s, &domain.Prompt{ID: "preset-id", Name: "Greeter", Tags: domain.Strings{"a"}, Metadata: domain.JSONObject{"k": "v"}},
			&domain.PromptVersion{Template: "Hi {{ name }}{{#items}} {{title}}{{/items}}", Config: domain.JSONObject{"model": "gpt-4o", "temperature": 0.3}, Notes: "first"})
		if p.ID != "preset-id" || p.ActiveVersion == nil || *p.ActiveVersion != 1 || p.ActiveVersionID == nil || p.VersionCount != 1 {
			t.Fatalf("created %+v", p)
		}
		if p.Template != "Hi {{ name }}{{#items}} {{title}}{{/items}}" || !slices.Equal(p.Variables, []string{"name", "items"}) {
			t.Fatalf("template %q variables %v", p.Template, p.Variables)
		}
		if p.Metadata["k"] != "v" || !slices.Equal(p.Tags, domain.Strings{"a"}) || p.CreatedAt.IsZero() {
			t.Fatalf("fields %+v", p)
		}
		v, err := s.PromptVersionGet(ctx, promptTestWS, p.ID, *p.ActiveVersionID)
		if err != nil {
			t.Fatal(err)
		}
		if !v.IsActive || v.Version != 1 || v.Notes != "first" || v.Config["model"] != "gpt-4o" || v.Config["temperature"] != 0.3 {
			t.Fatalf("version 1 %+v", v)
		}

		bare := mustPrompt(t, s, &domain.Prompt{Name: "Bare"}, nil)
		if bare.ActiveVersionID != nil || bare.ActiveVersion != nil || bare.Template != "" || bare.Variables == nil || len(bare.Variables) != 0 ||
			bare.VersionCount != 0 || bare.Tags == nil || bare.Metadata == nil {
			t.Fatalf("bare prompt %+v", bare)
		}
		if len(bare.ID) != 27 {
			t.Fatalf("id %q is not a KSUID", bare.ID)
		}

		_, err = s.PromptCreate(ctx, &domain.Prompt{ID: "preset-id", WorkspaceID: promptTestWS, Name: "Again"}, nil)
		wantErr[*ConflictError](t, err, "preset-id")

		// A first version that fails its rules leaves no prompt behind.
		_, err = s.PromptCreate(ctx, &domain.Prompt{ID: "broken", WorkspaceID: promptTestWS, Name: "Broken"}, &domain.PromptVersion{Template: "{{#open}}"})
		if ve := wantErr[*ValidationError](t, err, "template"); ve.Field != "template" {
			t.Fatalf("field %q", ve.Field)
		}
		_, err = s.PromptGet(ctx, promptTestWS, "broken")
		wantErr[*NotFoundError](t, err, "prompt broken")

		_, err = s.PromptGet(ctx, "other", p.ID)
		wantErr[*NotFoundError](t, err, "prompt preset-id not found")
		_, _, err = s.PromptVersionList(ctx, "other", p.ID, domain.Page{Page: 1, Limit: 10})
		wantErr[*NotFoundError](t, err, "prompt")
	})
}

func TestPromptVersions(t *testing.T) {
	t.Parallel()
	promptTestStores(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		p := mustPrompt(t, s, &domain.Prompt{Name: "P"}, &domain.PromptVersion{Template: "one {{a}}"})
		v1 := *p.ActiveVersionID
		v2 := mustVersion(t, s, &domain.PromptVersion{PromptID: p.ID, Template: "two {{b}}", Notes: "n2"})
		v3 := mustVersion(t, s, &domain.PromptVersion{PromptID: p.ID, Template: "three {{c}}"})
		if v2.Version != 2 || v3.Version != 3 || v2.IsActive || v3.IsActive || !slices.Equal(v2.Variables, []string{"b"}) || v2.Config == nil {
			t.Fatalf("v2 %+v v3 %+v", v2, v3)
		}
		got, err := s.PromptGet(ctx, promptTestWS, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if *got.ActiveVersionID != v1 || *got.ActiveVersion != 1 || got.Template != "one {{a}}" || got.VersionCount != 3 {
			t.Fatalf("creating versions changed the prompt: %+v", got)
		}

		if err := s.PromptVersionPromote(ctx, promptTestWS, p.ID, v3.ID); err != nil {
			t.Fatal(err)
		}
		got, _ = s.PromptGet(ctx, promptTestWS, p.ID)
		if *got.ActiveVersion != 3 || got.Template != "three {{c}}" || !slices.Equal(got.Variables, []string{"c"}) {
			t.Fatalf("after promote %+v", got)
		}
		list, total, err := s.PromptVersionList(ctx, promptTestWS, p.ID, domain.Page{Page: 1, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if total != 3 || len(list) != 2 || list[0].Version != 3 || !list[0].IsActive || list[1].Version != 2 || list[1].IsActive {
			t.Fatalf("list %d %+v %+v", total, list[0], list[1])
		}
		list, _, _ = s.PromptVersionList(ctx, promptTestWS, p.ID, domain.Page{Page: 2, Limit: 2})
		if len(list) != 1 || list[0].ID != v1 || list[0].IsActive {
			t.Fatalf("page 2 %+v", list)
		}

		// Preset ids and numbers past the counter are kept; numbers below it are not reused.
		v10 := mustVersion(t, s, &domain.PromptVersion{ID: "v10", PromptID: p.ID, Version: 10, Template: "ten"})
		v11 := mustVersion(t, s, &domain.PromptVersion{PromptID: p.ID, Version: 2, Template: "eleven"})
		if v10.ID != "v10" || v10.Version != 10 || v11.Version != 11 {
			t.Fatalf("v10 %+v v11 %+v", v10, v11)
		}
		_, err = s.PromptVersionCreate(ctx, &domain.PromptVersion{ID: "v10", WorkspaceID: promptTestWS, PromptID: p.ID, Template: "dup"})
		wantErr[*ConflictError](t, err, "v10")

		other := mustPrompt(t, s, &domain.Prompt{Name: "Other"}, &domain.PromptVersion{Template: "x"})
		err = s.PromptVersionPromote(ctx, promptTestWS, other.ID, v2.ID)
		wantErr[*NotFoundError](t, err, "prompt version "+v2.ID)
		err = s.PromptVersionPromote(ctx, promptTestWS, "missing", v2.ID)
		wantErr[*NotFoundError](t, err, "prompt missing")
		_, err = s.PromptVersionGet(ctx, promptTestWS, other.ID, v2.ID)
		wantErr[*NotFoundError](t, err, "prompt version")
		_, err = s.PromptVersionCreate(ctx, &domain.PromptVersion{WorkspaceID: promptTestWS, PromptID: "missing", Template: "x"})
		wantErr[*NotFoundError](t, err, "prompt missing")
		_, err = s.PromptVersionCreate(ctx, &domain.PromptVersion{WorkspaceID: "other", PromptID: p.ID, Template: "x"})
		wantErr[*NotFoundError](t, err, "prompt "+p.ID)
	})
}

func TestPromptVersionRules(t *testing.T) {
	t.Parallel()
	promptTestStores(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		p := mustPrompt(t, s, &domain.Prompt{Name: "P"}, nil)
		for _, tc := range []struct {
			name     string
			template string
			config   domain.JSONObject
			field    string
		}{
			{"empty template", " ", nil, "template"},
			{"unclosed section", "{{#a}}", nil, "template"},
			{"partial", "{{> other}}", nil, "template"},
			{"model not a string", "x", domain.JSONObject{"model": 4.0}, "config.model"},
			{"unknown model", "x", domain.JSONObject{"model": "gpt-0"}, "config.model"},
			{"temperature too high", "x", domain.JSONObject{"temperature": 2.5}, "config.temperature"},
			{"temperature not a number", "x", domain.JSONObject{"temperature": "hot"}, "config.temperature"},
			{"max_tokens fractional", "x", domain.JSONObject{"max_tokens": 1.5}, "config.max_tokens"},
		} {
			_, err := s.PromptVersionCreate(ctx, &domain.PromptVersion{WorkspaceID: promptTestWS, PromptID: p.ID, Template: tc.template, Config: tc.config})
			if err == nil || !strings.HasPrefix(err.Error(), tc.field+":") {
				t.Errorf("%s: error %v, want one naming %s", tc.name, err, tc.field)
			}
		}
		v := mustVersion(t, s, &domain.PromptVersion{PromptID: p.ID, Template: "ok", Config: domain.JSONObject{"model": "gpt-4o", "max_tokens": 100, "top_p": 0.9}})
		if v.Version != 1 || v.Config["top_p"] != 0.9 {
			t.Fatalf("failed creations used up numbers or lost config: %+v", v)
		}
	})
}

func TestPromptListUpdate(t *testing.T) {
	t.Parallel()
	promptTestStores(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		// Ids ascend with creation, so the order holds even when both land in one millisecond.
		a := mustPrompt(t, s, &domain.Prompt{ID: "prompt-a", Name: "Support reply", Description: "Replies to tickets", Tags: domain.Strings{"support", "customer"}}, &domain.PromptVersion{Template: "a"})
		b := mustPrompt(t, s, &domain.Prompt{ID: "prompt-b", Name: "SQL writer", Description: "100% read-only", Tags: domain.Strings{"SQL"}}, &domain.PromptVersion{Template: "b"})
		mustPrompt(t, s, &domain.Prompt{WorkspaceID: "other", Name: "Elsewhere", Tags: domain.Strings{"support"}}, nil)
		for _, tc := range []struct {
			f    domain.PromptFilter
			want []string
		}{
			{domain.PromptFilter{}, []string{b.ID, a.ID}},
			{domain.PromptFilter{Query: "REPLY"}, []string{a.ID}},
			{domain.PromptFilter{Query: "tickets"}, []string{a.ID}},
			{domain.PromptFilter{Query: "100%"}, []string{b.ID}},
			{domain.PromptFilter{Query: "%"}, []string{b.ID}},
			{domain.PromptFilter{Query: "_"}, nil},
			{domain.PromptFilter{Tag: "support"}, []string{a.ID}},
			{domain.PromptFilter{Tag: "sql"}, []string{b.ID}},
			{domain.PromptFilter{Tag: "supp"}, nil},
			{domain.PromptFilter{Tag: "%"}, nil},
			{domain.PromptFilter{Tag: "customer", Query: "support"}, []string{a.ID}},
			{domain.PromptFilter{Tag: "customer", Query: "sql"}, nil},
		} {
			items, total, err := s.PromptList(ctx, promptTestWS, tc.f, domain.Page{Page: 1, Limit: 20})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, p := range items {
				ids = append(ids, p.ID)
			}
			if !slices.Equal(ids, tc.want) || total != len(tc.want) || items == nil {
				t.Errorf("filter %+v: got %v (total %d), want %v", tc.f, ids, total, tc.want)
			}
		}
		items, total, err := s.PromptList(ctx, promptTestWS, domain.PromptFilter{}, domain.Page{Page: 2, Limit: 1})
		if err != nil || total != 2 || len(items) != 1 || items[0].ID != a.ID || items[0].Template != "a" {
			t.Fatalf("page 2: %v %d %+v", err, total, items)
		}

		name, tags := "Support answer", domain.Strings{}
		got, err := s.PromptUpdate(ctx, promptTestWS, a.ID, domain.PromptPatch{Name: &name, Tags: &tags, Metadata: &domain.JSONObject{"team": "cx"}})
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != name || len(got.Tags) != 0 || got.Metadata["team"] != "cx" || got.Description != a.Description || got.Template != "a" {
			t.Fatalf("updated %+v", got)
		}
		_, err = s.PromptUpdate(ctx, promptTestWS, "missing", domain.PromptPatch{Name: &name})
		wantErr[*NotFoundError](t, err, "prompt missing")
		_, err = s.PromptUpdate(ctx, "other", a.ID, domain.PromptPatch{Name: &name})
		wantErr[*NotFoundError](t, err, "prompt "+a.ID)
	})
}

func TestPromptDelete(t *testing.T) {
	t.Parallel()
	promptTestStores(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		p := mustPrompt(t, s, &domain.Prompt{Name: "Used"}, &domain.PromptVersion{Template: "x"})
		mustVersion(t, s, &domain.PromptVersion{PromptID: p.ID, Template: "y"})
		keep := mustPrompt(t, s, &domain.Prompt{Name: "Kept"}, &domain.PromptVersion{Template: "k"})

		agent, err := s.AgentCreate(ctx, &domain.Agent{WorkspaceID: promptTestWS, Name: "A", Type: "simple", Status: "active"},
			&domain.AgentConfig{Model: "gpt-4o"}, "")
		if err != nil {
			t.Fatal(err)
		}
		// Only an older, inactive version of the agent uses the prompt: that still blocks.
		if _, err := s.AgentVersionCreate(ctx, &domain.AgentVersion{WorkspaceID: promptTestWS, AgentID: agent.ID,
			Config: domain.AgentConfig{Model: "gpt-4o", PromptID: p.ID}}); err != nil {
			t.Fatal(err)
		}
		_, err = s.PromptDelete(ctx, promptTestWS, p.ID)
		ce := wantErr[*ConflictError](t, err, agent.ID)
		if !strings.Contains(ce.Message, p.ID) || !strings.Contains(ce.Message, "version 2") {
			t.Fatalf("message %q", ce.Message)
		}
		if _, err := s.PromptGet(ctx, promptTestWS, p.ID); err != nil {
			t.Fatalf("refused delete removed the prompt: %v", err)
		}

		if _, err := s.AgentDelete(ctx, promptTestWS, agent.ID); err != nil {
			t.Fatal(err)
		}
		deleted, err := s.PromptDelete(ctx, promptTestWS, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if deleted.ID != p.ID || deleted.VersionCount != 2 {
			t.Fatalf("deleted %+v", deleted)
		}
		_, err = s.PromptGet(ctx, promptTestWS, p.ID)
		wantErr[*NotFoundError](t, err, "prompt")
		var n int
		if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM prompt_versions WHERE prompt_id = $1", p.ID).Scan(&n); err != nil || n != 0 {
			t.Fatalf("versions left: %d %v", n, err)
		}
		if got, err := s.PromptGet(ctx, promptTestWS, keep.ID); err != nil || got.VersionCount != 1 {
			t.Fatalf("other prompt: %+v %v", got, err)
		}
		_, err = s.PromptDelete(ctx, promptTestWS, p.ID)
		wantErr[*NotFoundError](t, err, "prompt "+p.ID)
		_, err = s.PromptDelete(ctx, "other", keep.ID)
		wantErr[*NotFoundError](t, err, "prompt "+keep.ID)
	})
}

// An id that differs only in case from the one an agent uses must not be blocked: SQLite's LIKE
// ignores case, KSUIDs do not.
func TestPromptDeleteCaseSensitiveReference(t *testing.T) {
	t.Parallel()
	promptTestStores(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		used := mustPrompt(t, s, &domain.Prompt{ID: "abcDEF", Name: "Used"}, nil)
		other := mustPrompt(t, s, &domain.Prompt{ID: "ABCdef", Name: "Other"}, nil)
		if _, err := s.AgentCreate(ctx, &domain.Agent{WorkspaceID: promptTestWS, Name: "A", Type: "simple", Status: "active"},
			&domain.AgentConfig{Model: "gpt-4o", PromptID: used.ID}, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PromptDelete(ctx, promptTestWS, other.ID); err != nil {
			t.Fatalf("delete of an unused prompt refused: %v", err)
		}
		_, err := s.PromptDelete(ctx, promptTestWS, used.ID)
		wantErr[*ConflictError](t, err, used.ID)
	})
}

func TestPromptVersionConcurrentNumbers(t *testing.T) {
	t.Parallel()
	promptTestStores(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		p := mustPrompt(t, s, &domain.Prompt{Name: "Busy"}, &domain.PromptVersion{Template: "v1"})
		const n = 8
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.PromptVersionCreate(ctx, &domain.PromptVersion{WorkspaceID: promptTestWS, PromptID: p.ID, Template: fmt.Sprintf("v%d", i)})
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		list, total, err := s.PromptVersionList(ctx, promptTestWS, p.ID, domain.Page{Page: 1, Limit: 100})
		if err != nil || total != n+1 {
			t.Fatalf("total %d err %v", total, err)
		}
		for i, v := range list {
			if v.Version != n+1-i {
				t.Fatalf("version numbers %d at %d: not 1..%d without gaps", v.Version, i, n+1)
			}
		}
	})
}
