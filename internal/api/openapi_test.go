package api

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/api/openapicheck"
	"github.com/agentplane/agentplane/internal/auth"
)

func TestOpenAPIDocumentIsValid31(t *testing.T) {
	e := newTestEnv(t)
	resp, err := http.Get(e.ts.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /openapi.json: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if err := openapicheck.ValidateDocument(raw); err != nil {
		t.Fatalf("the served document is not valid OpenAPI 3.1: %v", err)
	}
	var doc struct {
		OpenAPI string                               `json:"openapi"`
		Paths   map[string]map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi = %q", doc.OpenAPI)
	}
	// Every route of the table is documented, and nothing else is.
	n := 0
	for _, rt := range e.srv.routes {
		op, ok := doc.Paths[rt.path][strings.ToLower(rt.method)]
		if !ok {
			t.Errorf("route %s is not in the document", rt.pattern())
			continue
		}
		if op["operationId"] != rt.op {
			t.Errorf("%s: operationId %v, want %s", rt.pattern(), op["operationId"], rt.op)
		}
		n++
	}
	docOps := 0
	for _, item := range doc.Paths {
		docOps += len(item)
	}
	if docOps != n {
		t.Errorf("document has %d operations, route table %d", docOps, n)
	}
}

func TestServerDocumentHasNoEmulatorRoutes(t *testing.T) {
	e := newTestEnv(t)
	srv, err := New(Config{Store: e.store, Logger: e.srv.log, Secrets: e.srv.cfg.Secrets, WorkspaceID: e.ws, Engine: e.srv.engine})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(srv.OpenAPI()), "/admin/reset") {
		t.Fatal("the server's document lists emulator-only routes")
	}
	if err := openapicheck.ValidateDocument(srv.OpenAPI()); err != nil {
		t.Fatal(err)
	}
}

func TestDocsServedOffline(t *testing.T) {
	e := newTestEnv(t)
	for path, ct := range map[string]string{"/docs": "text/html", "/docs/": "text/html"} {
		resp, err := http.Get(e.ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), ct) || !strings.Contains(string(body), "/openapi.json") ||
			strings.Contains(string(body), "https://") {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
		}
	}
	resp, err := http.Get(e.ts.URL + "/docs/assets/swagger-ui-bundle.js")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("bundle: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestRouteScopesAreKnown: every scope the route table requires is one a key can be given.
func TestRouteScopesAreKnown(t *testing.T) {
	s := &Server{cfg: Config{Emulator: true}}
	for _, rt := range s.routeTable() {
		if rt.scope != "" && !auth.IsScope(rt.scope) {
			t.Errorf("%s requires unknown scope %q", rt.pattern(), rt.scope)
		}
	}
}
