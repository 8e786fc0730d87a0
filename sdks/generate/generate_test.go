package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
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

// TestSDKVersionsFollowTheServer: each SDK's version is the served document's info.version.
func TestSDKVersionsFollowTheServer(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, docFile))
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Info struct {
			Version string `json:"version"`
		} `json:"info"`
	}
	if err := json.Unmarshal(doc, &info); err != nil || info.Info.Version == "" {
		t.Fatalf("no info.version in %s: %v", docFile, err)
	}
	want := regexp.QuoteMeta(info.Info.Version)
	for file, pattern := range map[string]string{
		"sdks/typescript/package.json":       `(?m)^  "version": "` + want + `",$`,
		"sdks/python/pyproject.toml":         `(?m)^version = "` + want + `"$`,
		"sdks/python/agentplane/__init__.py": `(?m)^__version__ = "` + want + `"$`,
	} {
		b, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(pattern).Match(b) {
			t.Errorf("%s does not give the server's version %s", file, info.Info.Version)
		}
	}
}
