package api

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"testing"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

var strongTag = regexp.MustCompile(`^"[A-Za-z0-9_-]{22}"$`)

// get sends GET path with If-None-Match inm (when not "") and checks the answer against the
// document; it returns the status, the ETag and the body.
func (e *testEnv) getTagged(path, inm string) (int, string, []byte) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.ts.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if e.key != "" {
		req.Header.Set("X-API-Key", e.key)
	}
	if inm != "" {
		req.Header.Set("If-None-Match", inm)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if err := e.oapi.Validate(http.MethodGet, req.URL.Path, resp.StatusCode, body); err != nil {
		e.t.Fatalf("response breaks the OpenAPI contract: %v", err)
	}
	covered.Store(http.MethodGet+" "+req.URL.Path, true)
	tag := resp.Header.Get("ETag")
	if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusNotModified {
		if !strongTag.MatchString(tag) || resp.Header.Get("Cache-Control") != "private, no-cache" {
			e.t.Fatalf("GET %s -> %d: ETag %q, Cache-Control %q", path, resp.StatusCode, tag, resp.Header.Get("Cache-Control"))
		}
	} else if tag != "" {
		e.t.Fatalf("GET %s -> %d carries ETag %q", path, resp.StatusCode, tag)
	}
	if resp.StatusCode == http.StatusNotModified && len(body) != 0 {
		e.t.Fatalf("304 with a body: %q", body)
	}
	return resp.StatusCode, tag, body
}

// TestETags: GETs answer a strong ETag; If-None-Match naming it (weakly compared, in a list,
// or *) is a 304 without a body; a change of the data changes the tag. On the server the
// answer is computed from the database every time, so a write by another process (another
// node, the CLI) is seen at once, which the emulator's read cache could not promise.
func TestETags(t *testing.T) {
	t.Run("emulator", func(t *testing.T) { etagScenarios(t, newTestEnv(t), nil) })
	t.Run("serve-sqlite", func(t *testing.T) {
		path := dbs.SQLiteFile(t)
		st, err := store.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		other, err := store.Open(context.Background(), path) // another process on the same file
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { other.Close() })
		etagScenarios(t, newTestEnv(t, onStore(st), asServer()), other)
	})
	t.Run("serve-postgres", func(t *testing.T) {
		st := openTestPostgres(t)
		etagScenarios(t, newTestEnv(t, onStore(st), asServer()), nil)
	})
}

func etagScenarios(t *testing.T, e *testEnv, other *store.Store) {
	ctx := context.Background()
	a, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Tagged", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	status, tag, body := e.getTagged("/api/v1/agents", "")
	if status != http.StatusOK || len(body) == 0 {
		t.Fatalf("first GET: %d %s", status, body)
	}
	if _, again, _ := e.getTagged("/api/v1/agents", ""); again != tag {
		t.Fatalf("the same answer got another tag: %s then %s", tag, again)
	}
	for _, inm := range []string{tag, "W/" + tag, `"nope", ` + tag, "*"} {
		if status, got, _ := e.getTagged("/api/v1/agents", inm); status != http.StatusNotModified || got != tag {
			t.Fatalf("If-None-Match %s: %d, ETag %s", inm, status, got)
		}
	}
	if status, _, _ := e.getTagged("/api/v1/agents", `"nope"`); status != http.StatusOK {
		t.Fatalf("a stale tag: %d", status)
	}
	// One resource, and the tag follows its data.
	one := "/api/v1/agents/" + a.ID
	_, oneTag, _ := e.getTagged(one, "")
	if _, err := e.c.AgentUpdate(ctx, a.ID, client.AgentUpdateRequest{Description: ptr("changed")}); err != nil {
		t.Fatal(err)
	}
	status, newTag, body := e.getTagged(one, oneTag)
	if status != http.StatusOK || newTag == oneTag || !regexp.MustCompile(`"changed"`).Match(body) {
		t.Fatalf("after an update: %d, tag %s (was %s), %s", status, newTag, oneTag, body)
	}
	if status, _, _ := e.getTagged("/api/v1/agents", tag); status != http.StatusOK {
		t.Fatalf("the list's old tag after an update: %d", status)
	}
	if status, _, _ := e.getTagged("/api/v1/agents/nope", ""); status != http.StatusNotFound {
		t.Fatalf("unknown agent: %d", status)
	}
	if other != nil {
		_, tag, _ := e.getTagged(one, "")
		if _, err := other.AgentUpdate(ctx, e.ws, a.ID, domain.AgentPatch{Description: ptr("by another process")}); err != nil {
			t.Fatal(err)
		}
		status, _, body := e.getTagged(one, tag)
		if status != http.StatusOK || !regexp.MustCompile(`by another process`).Match(body) {
			t.Fatalf("a write by another process is not seen: %d %s", status, body)
		}
	}
}
