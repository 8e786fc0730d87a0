package store

import (
	"context"
	"testing"
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

// BenchmarkOpenPostgres is the cost of a fresh PostgreSQL store in a schema of its own, as the
// tests open them.
func BenchmarkOpenPostgres(b *testing.B) {
	for b.Loop() {
		openTestPostgres(b)
	}
}
