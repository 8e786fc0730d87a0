package api

import (
	"testing"
)

// BenchmarkOpenAPIDoc is what New pays for the document: building it, against finding the one
// built already for the same routes (routesKey included).
func BenchmarkOpenAPIDoc(b *testing.B) {
	routes := (&Server{cfg: Config{Emulator: true}}).routeTable()
	b.Run("build", func(b *testing.B) {
		for b.Loop() {
			if _, err := openAPIDoc(routes, true); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		for b.Loop() {
			if _, err := cachedOpenAPIDoc(routes, true); err != nil {
				b.Fatal(err)
			}
		}
	})
}
