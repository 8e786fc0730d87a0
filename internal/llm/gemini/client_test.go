package gemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/llm/gemini"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
)

func TestListModels(t *testing.T) {
	t.Parallel()
	srv, p := start(t)
	srv.Models = []string{"gemini-2.5-flash", "gemini-2.5-pro"}
	ids, err := p.ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ids, []string{"gemini-2.5-flash", "gemini-2.5-pro"}) {
		t.Errorf("ids = %q", ids)
	}
	req := srv.Requests()[0]
	if req.Method != http.MethodGet || req.Path != "/v1beta/models" || req.Header.Get("X-Goog-Api-Key") != testKey {
		t.Errorf("request = %s %s, key header %q", req.Method, req.Path, req.Header.Get("X-Goog-Api-Key"))
	}
}

func TestListModelsSkipsNonChatModels(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"models":[{"name":"models/text-embedding-004","supportedGenerationMethods":["embedContent"]},{"name":"models/gemini-2.0-flash","supportedGenerationMethods":["generateContent","countTokens"]}]}`))
	}))
	t.Cleanup(srv.Close)
	ids, err := gemini.New(endpoint(srv.URL)).ListModels(context.Background())
	if err != nil || !reflect.DeepEqual(ids, []string{"gemini-2.0-flash"}) {
		t.Errorf("ids = %q, err = %v", ids, err)
	}
}

func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	p := gemini.New(endpoint(url))
	_, err := p.ListModels(context.Background())
	var pe *llm.Error
	if !errors.As(err, &pe) || pe.Status != 0 || pe.Message != "the connection was refused" {
		t.Errorf("ListModels err = %v", err)
	}
	_, err = p.Complete(context.Background(), ask("x"), func(llm.Event) error { return nil })
	if !errors.As(err, &pe) || pe.Status != 0 || !pe.Retryable() {
		t.Errorf("Complete err = %v", err)
	}
}

func TestAPIKeyHeader(t *testing.T) {
	t.Parallel()
	srv, p := start(t)
	srv.Push(llmtest.Reply{Text: []string{"ok"}})
	if _, err := p.Complete(context.Background(), ask("x"), func(llm.Event) error { return nil }); err != nil {
		t.Fatal(err)
	}
	req := srv.Requests()[0]
	if got := req.Header.Get("X-Goog-Api-Key"); got != testKey {
		t.Errorf("x-goog-api-key = %q", got)
	}
	if strings.Contains(req.Query, testKey) || req.Header.Get("Authorization") != "" {
		t.Errorf("the key travels elsewhere too: query %q, authorization %q", req.Query, req.Header.Get("Authorization"))
	}

	// The fake refuses a request without a key, as the real API does.
	resp, err := http.Post(srv.URL+"/v1beta/models/"+testModel+":streamGenerateContent?alt=sse", "application/json", strings.NewReader(`{"contents":[{"parts":[{"text":"x"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Error struct {
			Code            int
			Message, Status string
		}
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != http.StatusForbidden || body.Error.Code != 403 || body.Error.Status != "PERMISSION_DENIED" ||
		!strings.Contains(body.Error.Message, "unregistered callers") {
		t.Errorf("no key: %d %+v", resp.StatusCode, body)
	}
}

// TestEnvironmentCannotRedirect checks that the SDK's environment variables neither
// redirect a configured Provider nor lend a key to one without a key.
func TestEnvironmentCannotRedirect(t *testing.T) {
	t.Setenv("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
	t.Setenv("GOOGLE_API_KEY", "env-key-must-not-be-used")
	t.Setenv("GEMINI_API_KEY", "env-key-must-not-be-used")
	srv, p := start(t)
	srv.Push(llmtest.Reply{Text: []string{"ok"}})
	if _, err := p.Complete(context.Background(), ask("x"), func(llm.Event) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0].Header.Get("X-Goog-Api-Key"); got != testKey {
		t.Errorf("x-goog-api-key = %q", got)
	}

	keyless := gemini.New(llm.Endpoint{Provider: "gemini", BaseURL: srv.URL})
	if _, err := keyless.Complete(context.Background(), ask("x"), func(llm.Event) error { return nil }); !errors.Is(err, gemini.ErrNoAPIKey) {
		t.Errorf("Complete without a key: %v", err)
	}
	if _, err := keyless.ListModels(context.Background()); !errors.Is(err, gemini.ErrNoAPIKey) {
		t.Errorf("ListModels without a key: %v", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("the fake got %d requests, want 1", n)
	}
}
