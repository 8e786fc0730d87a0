package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentplane/agentplane/internal/dbtest"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/pressly/goose/v3"
)

// forEachStore runs fn against a fresh in-memory SQLite store and, when TEST_DATABASE_URL is
// set, against a fresh PostgreSQL schema; the same tests cover both dialects.
func forEachStore(t *testing.T, fn func(t *testing.T, s *Store)) {
	t.Run("sqlite", func(t *testing.T) {
		s, err := Open(context.Background(), "memory")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		fn(t, s)
	})
	t.Run("postgres", func(t *testing.T) {
		s := openTestPostgres(t)
		fn(t, s)
	})
}

// forEachStoreAt runs fn on an in-memory SQLite store and, with TEST_DATABASE_URL, on a
// PostgreSQL one, both migrated up to version only, as a database made before the later
// migrations: where a migration test starts, reached without going down from the newest (the
// down migrations cost seconds on SQLite under -race; TestMigrationRetiresExecutionsWrite
// goes down the whole way).
func forEachStoreAt(t *testing.T, version int64, fn func(t *testing.T, s *Store, p *goose.Provider)) {
	at := func(t *testing.T, url string) {
		s, err := connect(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		p, err := s.migrations()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.UpTo(context.Background(), version); err != nil {
			t.Fatal(err)
		}
		fn(t, s, p)
	}
	t.Run("sqlite", func(t *testing.T) { at(t, "memory") })
	t.Run("postgres", func(t *testing.T) {
		u := dbtest.PostgresURL(t)
		if u == "" {
			t.Skip(dbtest.SkipMessage)
		}
		at(t, u)
	})
}

// openTestPostgres opens a database of its own on the server at TEST_DATABASE_URL, a copy of
// the package's migrated template, dropped when the test ends; it skips the test when the
// variable is unset.
func openTestPostgres(t testing.TB) *Store {
	t.Helper()
	u := dbs.URL(t)
	if u == "" {
		t.Skip(dbtest.SkipMessage)
	}
	s, err := Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func mustWorkspace(t testing.TB, s *Store, slug string) string {
	t.Helper()
	w, err := s.WorkspaceCreate(context.Background(), &domain.Workspace{Name: slug, Slug: slug})
	if err != nil {
		t.Fatal(err)
	}
	return w.ID
}

func mustModel(t *testing.T, s *Store) {
	t.Helper()
	if err := s.LLMModelUpsert(context.Background(), &domain.LLMModel{ID: "gpt-4o", Provider: "openai", Name: "GPT-4o", ContextWindow: 128000,
		MaxOutputTokens: 16384, InputPricePerMillion: 2.5, OutputPricePerMillion: 10, Capabilities: domain.Strings{"chat"}}); err != nil {
		t.Fatal(err)
	}
}

func TestAgentsAndVersions(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "a")
		other := mustWorkspace(t, s, "b")
		a, err := s.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: "Support Bot", Type: "simple", Status: "active",
			Tags: domain.Strings{"x"}, Metadata: domain.JSONObject{"team": "cx"}}, &domain.AgentConfig{Model: "gpt-4o"}, "first")
		if err != nil {
			t.Fatal(err)
		}
		if *a.ActiveVersion != 1 || a.VersionCount != 1 || a.Config.Model != "gpt-4o" || a.Metadata["team"] != "cx" {
			t.Fatalf("created agent: %+v", a)
		}
		// Versions: new ones never change the active one; numbers are never reused.
		v2, err := s.AgentVersionCreate(ctx, &domain.AgentVersion{WorkspaceID: ws, AgentID: a.ID, Config: domain.AgentConfig{Model: "gpt-4o", SystemPrompt: "two"}})
		if err != nil || v2.Version != 2 || v2.IsActive {
			t.Fatalf("v2 %+v %v", v2, err)
		}
		got, _ := s.AgentGet(ctx, ws, a.ID)
		if *got.ActiveVersion != 1 {
			t.Fatalf("creating a version changed the active one")
		}
		if err := s.AgentVersionPromote(ctx, ws, a.ID, v2.ID); err != nil {
			t.Fatal(err)
		}
		got, _ = s.AgentGet(ctx, ws, a.ID)
		if *got.ActiveVersion != 2 || got.Config.SystemPrompt != "two" {
			t.Fatalf("promote: %+v", got)
		}
		v3, err := s.AgentVersionCreate(ctx, &domain.AgentVersion{WorkspaceID: ws, AgentID: a.ID, Config: domain.AgentConfig{Model: "gpt-4o"}})
		if err != nil || v3.Version != 3 {
			t.Fatalf("v3 %+v %v", v3, err)
		}
		// Tenancy: nothing of ws is visible from other.
		if _, err := s.AgentGet(ctx, other, a.ID); !IsNotFound(err) {
			t.Fatalf("agent visible across workspaces: %v", err)
		}
		if _, err := s.AgentVersionGet(ctx, other, a.ID, v2.ID); !IsNotFound(err) {
			t.Fatalf("version visible across workspaces: %v", err)
		}
		if err := s.AgentVersionPromote(ctx, other, a.ID, v2.ID); !IsNotFound(err) {
			t.Fatalf("promote across workspaces: %v", err)
		}
		if _, err := s.AgentUpdate(ctx, other, a.ID, domain.AgentPatch{Name: domain.PtrTo("x")}); !IsNotFound(err) {
			t.Fatalf("update across workspaces: %v", err)
		}
		if l, n, _ := s.AgentList(ctx, other, domain.AgentFilter{}, domain.Page{Page: 1, Limit: 20}); n != 0 || len(l) != 0 {
			t.Fatalf("list across workspaces: %d", n)
		}
		// Filters and paging.
		for i := range 25 {
			if _, err := s.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: fmt.Sprintf("Chain %02d", i), Type: "chain", Status: "inactive"}, nil, ""); err != nil {
				t.Fatal(err)
			}
		}
		l, n, err := s.AgentList(ctx, ws, domain.AgentFilter{Type: "chain"}, domain.Page{Page: 2, Limit: 10})
		if err != nil || n != 25 || len(l) != 10 {
			t.Fatalf("page 2: %d items of %d, %v", len(l), n, err)
		}
		if _, n, _ = s.AgentList(ctx, ws, domain.AgentFilter{Query: "support"}, domain.Page{Page: 1, Limit: 20}); n != 1 {
			t.Fatalf("q filter: %d", n)
		}
		if _, n, _ = s.AgentList(ctx, ws, domain.AgentFilter{Query: "_"}, domain.Page{Page: 1, Limit: 20}); n != 0 {
			t.Fatalf("q treats _ as a wildcard: %d", n)
		}
		if _, n, _ = s.AgentList(ctx, ws, domain.AgentFilter{Status: "inactive"}, domain.Page{Page: 3, Limit: 10}); n != 25 {
			t.Fatalf("total on a late page: %d", n)
		}
		// Delete removes the versions.
		if _, err := s.AgentDelete(ctx, ws, a.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AgentVersionGet(ctx, ws, a.ID, v3.ID); !IsNotFound(err) {
			t.Fatalf("version outlived its agent: %v", err)
		}
		stats, _ := s.StoreStats(ctx)
		if stats["agent_versions"] != 0 {
			t.Fatalf("orphan versions: %v", stats)
		}
	})
}

func TestGenerationAndTruncate(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		mustModel(t, s)
		g := s.Generation()
		ws := mustWorkspace(t, s, "a")
		if s.Generation() == g {
			t.Fatal("a write outside a transaction did not bump the generation")
		}
		g = s.Generation()
		_ = s.InTx(ctx, func(tx *Store) error {
			_, err := tx.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: "x", Type: "simple", Status: "active"}, &domain.AgentConfig{Model: "gpt-4o"}, "")
			if err != nil {
				t.Fatal(err)
			}
			return nil
		})
		if s.Generation() == g {
			t.Fatal("a committed transaction did not bump the generation")
		}
		if err := s.Truncate(ctx); err != nil {
			t.Fatal(err)
		}
		stats, _ := s.StoreStats(ctx)
		for k, n := range stats {
			if n != 0 {
				t.Errorf("after truncate %s = %d", k, n)
			}
		}
	})
}

func TestMigrateIsIdempotent(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		if err := s.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

func TestFileStoreSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/sub/dir/agentplane.db"
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	mustModel(t, s)
	ws := mustWorkspace(t, s, "a")
	a, err := s.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: "Keep", Type: "simple", Status: "active"}, &domain.AgentConfig{Model: "gpt-4o"}, "")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.AgentGet(ctx, ws, a.ID)
	if err != nil || got.Name != "Keep" || *got.ActiveVersion != 1 {
		t.Fatalf("after reopen: %+v %v", got, err)
	}
}

// TestAgentReadsSeeEveryWrite: whatever caches AgentGet uses, a read after a committed write
// sees it (update, new version, promote, delete, a raw write in a transaction, truncate).
func TestAgentReadsSeeEveryWrite(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		mustModel(t, s)
		ws := mustWorkspace(t, s, "a")
		a, _ := s.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: "One", Type: "simple", Status: "active"}, &domain.AgentConfig{Model: "gpt-4o"}, "")
		read := func() *domain.Agent {
			t.Helper()
			got, err := s.AgentGet(ctx, ws, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		read()
		if _, err := s.AgentUpdate(ctx, ws, a.ID, domain.AgentPatch{Name: domain.PtrTo("Two")}); err != nil {
			t.Fatal(err)
		}
		if got := read(); got.Name != "Two" {
			t.Fatalf("after update: %s", got.Name)
		}
		v, _ := s.AgentVersionCreate(ctx, &domain.AgentVersion{WorkspaceID: ws, AgentID: a.ID, Config: domain.AgentConfig{Model: "gpt-4o", SystemPrompt: "v2"}})
		if got := read(); got.VersionCount != 2 {
			t.Fatalf("after new version: %d versions", got.VersionCount)
		}
		_ = s.AgentVersionPromote(ctx, ws, a.ID, v.ID)
		if got := read(); got.Config.SystemPrompt != "v2" {
			t.Fatal("promotion not seen")
		}
		_ = s.InTx(ctx, func(tx *Store) error {
			_, err := tx.exec(ctx, "UPDATE agents SET status = 'archived' WHERE id = $1", a.ID)
			return err
		})
		if got := read(); got.Status != "archived" {
			t.Fatal("raw write in a transaction not seen")
		}
		got := read()
		got.Name = "mutated by a caller"
		if read().Name != "Two" {
			t.Fatal("a caller's change leaked into the cache")
		}
		if _, err := s.AgentDelete(ctx, ws, a.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AgentGet(ctx, ws, a.ID); !IsNotFound(err) {
			t.Fatalf("deleted agent still served: %v", err)
		}
	})
}

// openBenchStore opens a benchmark's store: a SQLite file at sqlitePath, or a PostgreSQL
// database of its own (openTestPostgres) for the "postgres" dialect.
func openBenchStore(b *testing.B, dialect, sqlitePath string) *Store {
	b.Helper()
	if dialect == "postgres" {
		return openTestPostgres(b)
	}
	s, err := Open(context.Background(), sqlitePath)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}
