package store

import (
	"context"
	"testing"

	"github.com/agentplane/agentplane/internal/dbtest"
)

// BenchmarkOpenMemory is the cost of a fresh "memory" store, which most tests of the module
// open: the copy of the migrated template, against applying every migration to an empty
// database (the floor without the template).
func BenchmarkOpenMemory(b *testing.B) {
	ctx := context.Background()
	b.Run("template", func(b *testing.B) {
		for b.Loop() {
			s, err := Open(ctx, "memory")
			if err != nil {
				b.Fatal(err)
			}
			s.Close()
		}
	})
	b.Run("migrate", func(b *testing.B) {
		for b.Loop() {
			s, err := openMigrated(ctx, "memory")
			if err != nil {
				b.Fatal(err)
			}
			s.Close()
		}
	})
}

// BenchmarkOpenPostgres is the cost of a fresh PostgreSQL store as the tests open them: a
// database copied from the package's migrated template (openTestPostgres), against applying
// every migration to a schema of its own (what each test paid before the template).
func BenchmarkOpenPostgres(b *testing.B) {
	ctx := context.Background()
	b.Run("template", func(b *testing.B) {
		for b.Loop() {
			openTestPostgres(b).Close()
		}
	})
	b.Run("schema", func(b *testing.B) {
		for b.Loop() {
			u := dbtest.PostgresURL(b)
			if u == "" {
				b.Skip(dbtest.SkipMessage)
			}
			s, err := Open(ctx, u)
			if err != nil {
				b.Fatal(err)
			}
			s.Close()
		}
	})
}
