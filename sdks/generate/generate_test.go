package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedFilesAreFresh regenerates every file into a temporary folder and fails when a
// committed one differs: run `go run ./sdks/generate` after changing the route table.
func TestGeneratedFilesAreFresh(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, openapiTSRel)); err != nil {
		msg := "openapi-typescript is not installed: run `npm ci --ignore-scripts --prefix sdks/typescript` (.ci/run does)"
		if os.Getenv("AGENTPLANE_REQUIRE_CONTRACT_TOOLS") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	out := t.TempDir()
	if err := generate(root, out); err != nil {
		t.Fatal(err)
	}
	for _, name := range generatedFiles {
		want, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Errorf("%s is missing: run `go run ./sdks/generate`", name)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run `go run ./sdks/generate` and commit the result", name)
		}
	}
}

// TestIdempotentPostsListed: the generated lists name the creating POSTs and no other.
func TestIdempotentPostsListed(t *testing.T) {
	spec := openAPI{Paths: map[string]map[string]operation{
		"/api/v1/agents":                 {"post": {Parameters: []parameter{{Name: "Idempotency-Key", In: "header"}}}},
		"/api/v1/executions/{id}/cancel": {"post": {Parameters: []parameter{{Name: "id", In: "path"}}}},
	}}
	got := idempotentPosts(spec)
	if len(got) != 1 || got[0] != "/api/v1/agents" {
		t.Fatalf("idempotentPosts = %v", got)
	}
}
