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

// TestGoTypes: the Go SDK's types keep a pointer only where zero is a value to send, a PATCH
// clears a nullable scalar with Nullable, a property of any type is raw JSON, and a schema
// named as the hand-written layer's types is renamed.
func TestGoTypes(t *testing.T) {
	doc := []byte(`{"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
	"paths": {"/things/{id}": {"patch": {"operationId": "updateThing",
		"parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
		"requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/ThingUpdate"}}}},
		"responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}}}},
	"components": {"schemas": {
		"Thing": {"type": "object", "required": ["id", "owner"], "properties": {
			"id": {"type": "string"}, "owner": {"type": ["string", "null"]}, "note": {"type": "string"},
			"enabled": {"type": "boolean"}, "limit": {"type": "integer", "minimum": 1}, "weight": {"type": "number", "format": "double"},
			"payload": {"description": "anything"}, "option": {"$ref": "#/components/schemas/Option"}}},
		"ThingUpdate": {"type": "object", "properties": {"note": {"type": "string"}, "max": {"type": ["number", "null"]}}},
		"Option": {"type": "object", "properties": {"name": {"type": "string"}}}}}}`)
	code, err := goTypes(doc)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"required":         `ID +string +` + "`json:\"id\"`",
		"nullable":         `Owner +\*string`,
		"optional string":  `Note +string +` + "`json:\"note,omitempty,omitzero\"`",
		"boolean":          `Enabled +\*bool`,
		"zero is invalid":  `Limit +int +`,
		"zero is a number": `Weight +\*float64`,
		"any":              `Payload +json.RawMessage`,
		"reserved name":    `Option +APIOption`,
		"patch field":      `Note +\*string`,
		"patch null":       `Max +Nullable\[float64\]`,
	} {
		if !regexp.MustCompile(want).Match(code) {
			t.Errorf("%s: no %s in\n%s", name, want, code)
		}
	}
}
