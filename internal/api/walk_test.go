package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/domain"
)

// call sends one request with a key and returns the status and error envelope.
func call(t *testing.T, e *testEnv, key, method, path, body string) (int, string, string) {
	t.Helper()
	status, raw := send(t, e, key, method, path, body)
	var env struct{ Error, Message string }
	if json.Unmarshal(raw, &env) != nil {
		// OpenAI's error shape (the OpenAI-compatible routes).
		var oe OpenAIErrorBody
		_ = json.Unmarshal(raw, &oe)
		return status, oe.Error.Code, oe.Error.Message
	}
	return status, env.Error, env.Message
}

// send makes one request with key (a JSON body when body is not empty) and returns the
// status and the raw answer.
func send(t *testing.T, e *testEnv, key, method, path, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.ts.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, raw
}

func fill(path string, ids map[string]string) string {
	for name, v := range ids {
		path = strings.ReplaceAll(path, "{"+name+"}", v)
	}
	return path
}

// TestScopeWalk walks the whole route table: a key holding every scope but the one a route
// needs gets 403 naming that scope; a key holding just that scope (and the route's second
// one, if any) gets past authorization.
func TestScopeWalk(t *testing.T) {
	e := newServerEnv(t)
	for _, rt := range e.srv.routes {
		if rt.scope == "" || rt.userOnly {
			continue // userOnly routes refuse every key (users_test covers them)
		}
		var others []string
		for _, s := range auth.Scopes() {
			if s != rt.scope && s != auth.ScopeAll {
				others = append(others, s)
			}
		}
		without := e.newKey(&domain.APIKey{Name: "without", Scopes: domain.Strings(others)})
		needed := domain.Strings{rt.scope}
		if rt.also != "" {
			needed = append(needed, rt.also)
		}
		with := e.newKey(&domain.APIKey{Name: "with", Scopes: needed})
		path := fill(rt.path, map[string]string{"id": "nope", "version_id": "nope", "item_id": "nope"})
		body := ""
		if rt.method == http.MethodPost || rt.method == http.MethodPatch {
			body = "{}"
		}
		status, code, msg := call(t, e, without, rt.method, path, body)
		if status != http.StatusForbidden || code != "forbidden" || !strings.Contains(msg, rt.scope) {
			t.Errorf("%s without %s: %d %s %q", rt.pattern(), rt.scope, status, code, msg)
		}
		status, _, msg = call(t, e, with, rt.method, path, body)
		if status == http.StatusForbidden || status == http.StatusUnauthorized {
			t.Errorf("%s with %s: %d %q", rt.pattern(), rt.scope, status, msg)
		}
	}
}

// TestWorkspaceWalk creates one of every resource in workspace A, then calls every route that
// names an id with a "*" key of workspace B: each answers 404, never revealing A's resource.
func TestWorkspaceWalk(t *testing.T) {
	e := newServerEnv(t)
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	ids := oneOfEach(t, e) // workspace A; route prefix -> {id, version_id}
	// Workspace B with a key holding every scope.
	wsB, err := e.store.WorkspaceCreate(ctx, &domain.Workspace{Name: "B", Slug: "b"})
	must(err)
	rawB, _ := auth.NewKey()
	_, err = e.store.APIKeyCreate(ctx, &domain.APIKey{WorkspaceID: wsB.ID, Name: "b", KeyPrefix: auth.KeyPrefix(rawB), Scopes: domain.Strings{"*"}}, auth.HashKey(rawB))
	must(err)
	checked := 0
	for _, rt := range e.srv.routes {
		if !strings.Contains(rt.path, "{id}") {
			continue
		}
		var pair [2]string
		found := false
		for prefix, v := range ids {
			if strings.HasPrefix(rt.path, prefix) {
				pair, found = v, true
			}
		}
		if !found {
			t.Errorf("%s: no resource of workspace A to try it on", rt.pattern())
			continue
		}
		if strings.Contains(rt.path, "{version_id}") && pair[1] == "" {
			t.Errorf("%s: no version id", rt.pattern())
			continue
		}
		path := fill(rt.path, map[string]string{"id": pair[0], "version_id": pair[1], "item_id": pair[1]})
		body := ""
		if slices.Contains([]string{http.MethodPost, http.MethodPatch}, rt.method) {
			body = minimalBody(t, e.srv.OpenAPI(), rt.method, rt.path) // a body the document accepts: the id is what is tried
		}
		status, code, msg := call(t, e, rawB, rt.method, path, body)
		if status != http.StatusNotFound || code != "not_found" {
			t.Errorf("%s from workspace B: %d %s %q (want 404)", rt.pattern(), status, code, msg)
		}
		checked++
	}
	if checked < 40 {
		t.Fatalf("only %d routes checked", checked)
	}
}
