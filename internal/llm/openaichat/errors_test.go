package openaichat_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
	"github.com/agentplane/agentplane/internal/llm/openaichat"
)

func noEmit(llm.Event) error { return nil }

// providerError asserts err is an *llm.Error and returns it.
func providerError(t *testing.T, err error) *llm.Error {
	t.Helper()
	var pe *llm.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v (%T), want *llm.Error", err, err)
	}
	return pe
}

func TestUnauthorizedIsRedacted(t *testing.T) {
	t.Parallel()
	for _, op := range []string{"complete", "list models"} {
		t.Run(op, func(t *testing.T) {
			t.Parallel()
			srv := fake(t)
			// The fake echoes the received key masked, as OpenAI does.
			srv.Push(llmtest.Reply{Status: http.StatusUnauthorized})
			p := provider(srv, "openai", testKey)
			var err error
			if op == "complete" {
				_, err = p.Complete(context.Background(), ask("gpt-4o", "hi"), noEmit)
			} else {
				_, err = p.ListModels(context.Background())
			}
			pe := providerError(t, err)
			if !pe.Rejected() || pe.Retryable() || pe.Status != http.StatusUnauthorized || pe.Provider != "openai" {
				t.Errorf("error = %+v", pe)
			}
			if !strings.Contains(pe.Message, "Incorrect API key provided") || !strings.Contains(pe.Message, "platform.openai.com") {
				t.Errorf("message = %q, want the provider's", pe.Message)
			}
			text := err.Error()
			for _, part := range []string{testKey, testKey[len(testKey)-4:], "sk-proj-", "****"} {
				if strings.Contains(text, part) {
					t.Errorf("error text %q contains %q", text, part)
				}
			}
		})
	}
}

func TestRateLimitHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	srv := fake(t)
	srv.Push(
		llmtest.Reply{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"1"}}, ErrorMessage: "Rate limit reached for gpt-4o on requests per min (RPM): Limit 3, Used 3."},
		llmtest.Reply{Text: []string{"finally"}},
	)
	start := time.Now()
	resp, attempts, err := llm.Call(context.Background(), provider(srv, "openai", testKey), ask("gpt-4o", "hi"), llmtest.Sent,
		llm.CallOptions{MaxRetries: 2, Backoff: time.Millisecond})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "finally" || len(attempts) != 2 {
		t.Fatalf("content = %q after %d attempts, want 2", resp.Content, len(attempts))
	}
	if attempts[0].Status != http.StatusTooManyRequests || !strings.Contains(attempts[0].Error, "Rate limit reached") || attempts[0].WaitMS != 1000 {
		t.Errorf("first attempt = %+v", attempts[0])
	}
	if elapsed < time.Second {
		t.Errorf("elapsed %v, want >= 1s (Retry-After: 1)", elapsed)
	}
}

func TestServerErrorsRetried(t *testing.T) {
	t.Parallel()
	srv := fake(t)
	srv.Push(
		llmtest.Reply{Status: http.StatusInternalServerError, ErrorMessage: "The server had an error while processing your request."},
		llmtest.Reply{Status: http.StatusInternalServerError},
		llmtest.Reply{Text: []string{"ok"}},
	)
	resp, attempts, err := llm.Call(context.Background(), provider(srv, "openai", testKey), ask("gpt-4o", "hi"), llmtest.Sent,
		llm.CallOptions{MaxRetries: 2, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "ok" || len(attempts) != 3 || attempts[0].Status != 500 || attempts[1].Status != 500 {
		t.Errorf("content = %q, attempts = %+v", resp.Content, attempts)
	}
	if !strings.Contains(attempts[0].Error, "The server had an error") {
		t.Errorf("first attempt error = %q, want the provider's message", attempts[0].Error)
	}
}

func TestDisconnectMidStream(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		cutAfter int // chunks sent before the cut; the first carries only the role
		events   int
		attempts int
	}{
		// Once content reached the caller a retry would repeat it: the call fails.
		{"after content", 3, 2, 1},
		// Nothing emitted yet: the retry is invisible, and succeeds.
		{"before content", 1, 1, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := fake(t)
			srv.Push(llmtest.Reply{Text: []string{"one ", "two ", "three"}, CutAfter: tc.cutAfter}, llmtest.Reply{Text: []string{"again"}})
			var rec llmtest.Recorder
			resp, attempts, err := llm.Call(context.Background(), provider(srv, "openai", testKey), ask("gpt-4o", "hi"), rec.Sent,
				llm.CallOptions{MaxRetries: 2, Backoff: time.Millisecond})
			if len(attempts) != tc.attempts || len(srv.Requests()) != tc.attempts || len(rec.Events) != tc.events {
				t.Errorf("%d attempts, %d requests, %d events; want %d, %d, %d", len(attempts), len(srv.Requests()), len(rec.Events), tc.attempts, tc.attempts, tc.events)
			}
			if tc.attempts == 1 {
				pe := providerError(t, err)
				if pe.Status != 0 || pe.Message != llm.ErrIncomplete.Error() {
					t.Errorf("error = %+v, want an incomplete stream", pe)
				}
				return
			}
			if err != nil || resp.Content != "again" {
				t.Errorf("err = %v, resp = %+v", err, resp)
			}
		})
	}
}

func TestCancelClosesTheStream(t *testing.T) {
	t.Parallel()
	srv := fake(t)
	srv.Push(llmtest.Reply{Text: []string{"slow ", "stream ", "of ", "words"}, Delay: 200 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelled time.Time
	_, err := provider(srv, "openai", testKey).Complete(ctx, ask("gpt-4o", "hi"), func(ev llm.Event) error {
		if cancelled.IsZero() {
			cancelled = time.Now()
			cancel()
		}
		return nil
	})
	returned := time.Since(cancelled)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if cancelled.IsZero() || returned > 50*time.Millisecond {
		t.Errorf("Complete returned %v after cancel, want <= 50ms", returned)
	}
	select {
	case gone := <-srv.ClientGone():
		if d := gone.Sub(cancelled); d > 100*time.Millisecond {
			t.Errorf("the fake saw the client leave %v after cancel, want <= 100ms", d)
		}
	case <-time.After(time.Second):
		t.Error("the upstream connection was not closed")
	}
}

// raw starts a server answering every request with handler, for wire shapes the fake
// does not script.
func raw(t *testing.T, handler http.HandlerFunc) *openaichat.Provider {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return openaichat.New(llm.Endpoint{Provider: "compat", BaseURL: srv.URL + "/v1", APIKey: testKey})
}

// sse answers status 200 with body as an event stream.
func sse(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}
}

const (
	roleChunk   = `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}` + "\n\n"
	finishChunk = `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n"
	doneLine    = "data: [DONE]\n\n"
)

func TestIncompleteOrBrokenStreams(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		status     int
		message    string
	}{
		{"no end marker", roleChunk + finishChunk, 0, llm.ErrIncomplete.Error()},
		{"no finish reason", roleChunk + doneLine, 0, llm.ErrIncomplete.Error()},
		{"malformed chunk", roleChunk + "data: {\"choices\": [\n\n" + finishChunk + doneLine, 0, ""},
		{"error event", roleChunk + `data: {"error":{"message":"The model is overloaded.","type":"server_error"}}` + "\n\n", 0, "The model is overloaded."},
		{"error event with a status", `data: {"error":{"message":"Provider returned error","code":502}}` + "\n\n", 502, "Provider returned error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := raw(t, sse(tc.body)).Complete(context.Background(), ask("m", "hi"), noEmit)
			pe := providerError(t, err)
			if pe.Status != tc.status || !strings.Contains(pe.Message, tc.message) {
				t.Errorf("error = %+v, want status %d with %q", pe, tc.status, tc.message)
			}
		})
	}
	// The control: the same stream with both markers is a complete answer, also with
	// "data:" written without its space.
	resp, err := raw(t, sse(roleChunk+finishChunk+"data:[DONE]\n\n")).Complete(context.Background(), ask("m", "hi"), noEmit)
	if err != nil || resp.Content != "Hi" {
		t.Errorf("complete stream: %v, %+v", err, resp)
	}
}

func TestErrorBodiesOfCompatibleServers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, contentType, body string
		status                  int
		message                 string
	}{
		{"ollama", "application/json", `{"error":"model \"llama9\" not found, try pulling it first"}`, 404, `model "llama9" not found`},
		{"vllm", "application/json", `{"object":"error","message":"The model does not exist.","type":"NotFoundError","code":404}`, 404, "The model does not exist."},
		{"fastapi", "application/json", `{"detail":"Not authenticated"}`, 403, "Not authenticated"},
		{"proxy", "text/html", `<html><body>502 Bad Gateway</body></html>`, 502, "502 Bad Gateway"},
		{"echoed key", "application/json", `{"error":{"message":"key ` + testKey + ` is revoked"}}`, 401, "key [redacted] is revoked"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := raw(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			})
			_, err := p.Complete(context.Background(), ask("m", "hi"), noEmit)
			pe := providerError(t, err)
			if pe.Status != tc.status || !strings.Contains(pe.Message, tc.message) || strings.Contains(err.Error(), testKey) {
				t.Errorf("complete: error = %+v, want %d with %q", pe, tc.status, tc.message)
			}
			_, err = p.ListModels(context.Background())
			if pe := providerError(t, err); pe.Status != tc.status || !strings.Contains(pe.Message, tc.message) {
				t.Errorf("list models: error = %+v, want %d with %q", pe, tc.status, tc.message)
			}
		})
	}
}

func TestConnectionRefusedIsRetryable(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	p := openaichat.New(llm.Endpoint{Provider: "openai", BaseURL: "http://" + addr + "/v1", APIKey: testKey})
	_, err = p.Complete(context.Background(), ask("gpt-4o", "hi"), noEmit)
	pe := providerError(t, err)
	if pe.Status != 0 || !pe.Retryable() || pe.Message != "the connection was refused" {
		t.Errorf("error = %+v", pe)
	}
}
