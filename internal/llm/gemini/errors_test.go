package gemini_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/llm/gemini"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
)

// quick retries a few times without waiting long.
var quick = llm.CallOptions{MaxRetries: 2, Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}

func discard(llm.Event) error { return nil }

func TestRejectedKey(t *testing.T) {
	t.Parallel()
	masked := testKey[:4] + "****" + testKey[len(testKey)-4:]
	tests := []struct {
		name, message, want string
	}{
		{"plain", "API key not valid. Please pass a valid API key.", "API key not valid. Please pass a valid API key."},
		{"echoes the key", "API key not valid: " + testKey, "API key not valid: [redacted]"},
		{"echoes a masked key", "API key not valid: " + masked + ".", "API key not valid: [redacted]."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, p := start(t)
			srv.Push(llmtest.Reply{Status: http.StatusUnauthorized, ErrorMessage: tt.message})
			_, attempts, err := llm.Call(context.Background(), p, ask("x"), llmtest.Sent, quick)
			var pe *llm.Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v (%T), want *llm.Error", err, err)
			}
			if !pe.Rejected() || pe.Status != 401 || pe.Provider != "gemini" || pe.Message != tt.want || len(attempts) != 1 {
				t.Errorf("err = %+v, attempts = %d", pe, len(attempts))
			}
			for _, secret := range []string{testKey, masked, testKey[len(testKey)-8:]} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error %q shows %q", err, secret)
				}
			}
		})
	}
}

func TestRateLimitHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	srv, p := start(t)
	srv.Push(
		llmtest.Reply{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"1"}}, ErrorMessage: "Resource has been exhausted (e.g. check quota)."},
		llmtest.Reply{Text: []string{"finally"}},
	)
	start := time.Now()
	resp, attempts, err := llm.Call(context.Background(), p, ask("x"), llmtest.Sent, quick)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "finally" || len(attempts) != 2 || attempts[0].Status != 429 || attempts[0].WaitMS != 1000 {
		t.Errorf("content %q, attempts %+v", resp.Content, attempts)
	}
	if elapsed < time.Second {
		t.Errorf("retried after %v, before Retry-After's 1 s", elapsed)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("the fake got %d requests, want 2", n)
	}
}

func TestServerErrorsRetried(t *testing.T) {
	t.Parallel()
	srv, p := start(t)
	srv.Push(
		llmtest.Reply{Status: http.StatusInternalServerError, ErrorMessage: "An internal error has occurred."},
		llmtest.Reply{Status: http.StatusServiceUnavailable, ErrorMessage: "The model is overloaded. Please try again later."},
		llmtest.Reply{Text: []string{"ok"}},
	)
	resp, attempts, err := llm.Call(context.Background(), p, ask("x"), llmtest.Sent, quick)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "ok" || len(attempts) != 3 || attempts[0].Status != 500 || attempts[1].Status != 503 ||
		attempts[1].Error != "gemini (503): The model is overloaded. Please try again later." {
		t.Errorf("content %q, attempts %+v", resp.Content, attempts)
	}
	// The SDK must not retry on its own: one request per attempt.
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("the fake got %d requests, want 3", n)
	}
}

func TestSDKDoesNotRetry(t *testing.T) {
	t.Parallel()
	srv, p := start(t)
	srv.Push(llmtest.Reply{Status: http.StatusServiceUnavailable}, llmtest.Reply{Text: []string{"too late"}})
	_, err := p.Complete(context.Background(), ask("x"), discard)
	var pe *llm.Error
	if !errors.As(err, &pe) || pe.Status != 503 || !pe.Retryable() {
		t.Errorf("err = %v", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("the fake got %d requests, want 1", n)
	}
}

func TestDisconnect(t *testing.T) {
	t.Parallel()
	t.Run("after content: not retried", func(t *testing.T) {
		t.Parallel()
		srv, p := start(t)
		srv.Push(llmtest.Reply{Text: []string{"partial ", "answer"}, CutAfter: 1}, llmtest.Reply{Text: []string{"whole"}})
		var rec llmtest.Recorder
		_, attempts, err := llm.Call(context.Background(), p, ask("x"), rec.Sent, quick)
		var pe *llm.Error
		if !errors.As(err, &pe) || pe.Status != 0 || pe.Message != llm.ErrIncomplete.Error() {
			t.Fatalf("err = %v (%T)", err, err)
		}
		if len(attempts) != 1 || len(rec.Events) != 1 || len(srv.Requests()) != 1 {
			t.Errorf("attempts %d, events %+v, requests %d", len(attempts), rec.Events, len(srv.Requests()))
		}
	})
	t.Run("before anything was emitted: retried", func(t *testing.T) {
		t.Parallel()
		srv, p := start(t)
		srv.Push(
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "a"}, {Name: "b"}}, CutAfter: 1},
			llmtest.Reply{Text: []string{"whole"}},
		)
		resp, attempts, err := llm.Call(context.Background(), p, ask("x"), llmtest.Sent, quick)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Content != "whole" || len(attempts) != 2 || attempts[0].Status != 0 || attempts[0].Error == "" {
			t.Errorf("content %q, attempts %+v", resp.Content, attempts)
		}
	})
	t.Run("clean end without finish reason", func(t *testing.T) {
		t.Parallel()
		srv := rawSSE(t, `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"half"}]},"index":0}]}`+"\n\n")
		_, err := gemini.New(endpoint(srv.URL)).Complete(context.Background(), ask("x"), discard)
		var pe *llm.Error
		if !errors.As(err, &pe) || pe.Status != 0 || pe.Message != llm.ErrIncomplete.Error() {
			t.Errorf("err = %v", err)
		}
	})
}

func TestRetryInfoDelay(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED",` +
			`"details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[]},` +
			`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"27s"}]}}`))
	}))
	t.Cleanup(srv.Close)
	_, err := gemini.New(endpoint(srv.URL)).Complete(context.Background(), ask("x"), discard)
	var pe *llm.Error
	if !errors.As(err, &pe) || pe.Status != 429 || pe.RetryAfter != 27*time.Second || pe.Message != "You exceeded your current quota." {
		t.Errorf("err = %+v", err)
	}
}

func TestErrorInsideStream(t *testing.T) {
	t.Parallel()
	srv := rawSSE(t,
		`data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Once"}]},"index":0}]}`+"\n\n",
		`data: {"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`+"\n\n")
	var rec llmtest.Recorder
	_, attempts, err := llm.Call(context.Background(), gemini.New(endpoint(srv.URL)), ask("x"), rec.Sent, quick)
	var pe *llm.Error
	if !errors.As(err, &pe) || pe.Status != 503 || pe.Message != "The model is overloaded." {
		t.Errorf("err = %v", err)
	}
	if len(attempts) != 1 || len(rec.Events) != 1 {
		t.Errorf("attempts %d, events %+v: a failure after content must not be retried", len(attempts), rec.Events)
	}
}

// The Gemini API refuses an invalid key with 400 API_KEY_INVALID, not 401: it must still
// read as a rejected credential, and ListModels (credential validation) must say so too.
func TestInvalidKeyIsRejected(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewGemini()
	t.Cleanup(srv.Close)
	ep := endpoint(srv.URL)
	ep.APIKey = "bad-" + testKey
	p := gemini.New(ep)
	for name, call := range map[string]func() error{
		"complete": func() error {
			_, err := p.Complete(context.Background(), ask("hi"), discard)
			return err
		},
		"list models": func() error {
			_, err := p.ListModels(context.Background())
			return err
		},
	} {
		err := call()
		var pe *llm.Error
		if !errors.As(err, &pe) || pe.Status != 400 || !pe.Rejected() || pe.Retryable() || !strings.Contains(pe.Message, "API key not valid") ||
			strings.Contains(err.Error(), testKey) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
