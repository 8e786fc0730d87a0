package anthropicmsg_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/llm/anthropicmsg"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
)

func TestUnauthorized(t *testing.T) {
	t.Parallel()
	masked := "sk-ant-api03-****...1234"
	tests := []struct {
		name  string
		key   string
		reply *llmtest.Reply
		want  string
	}{
		{name: "wrong key", key: "bad-" + testKey, want: "invalid x-api-key"},
		{
			name:  "message echoes the key, masked and whole",
			key:   testKey,
			reply: &llmtest.Reply{Status: 401, ErrorMessage: "invalid x-api-key " + masked + " (" + testKey + ")"},
			want:  "invalid x-api-key",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewAnthropic()
			defer srv.Close()
			if tt.reply != nil {
				srv.Push(*tt.reply)
			}
			p := anthropicmsg.New(endpoint(srv.URL, tt.key))
			_, attempts, err := llm.Call(context.Background(), p, ask(), (&llmtest.Recorder{}).Sent, llm.CallOptions{MaxRetries: 2, Backoff: time.Millisecond})
			pe := providerError(t, err)
			if !pe.Rejected() || pe.Status != http.StatusUnauthorized {
				t.Errorf("error %v: want a 401 rejection", pe)
			}
			if !strings.HasPrefix(pe.Message, tt.want) {
				t.Errorf("Message = %q, want the provider's %q", pe.Message, tt.want)
			}
			for _, leak := range []string{tt.key, masked, "Zx9secret", "****"} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("error text %q contains %q", err.Error(), leak)
				}
			}
			equal(t, "attempts", len(attempts), 1)
		})
	}
}

func TestRateLimitHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	srv, p := setup(t)
	srv.Push(
		llmtest.Reply{Status: 429, ErrorMessage: "Number of request tokens has exceeded your rate limit", Header: http.Header{"Retry-After": {"1"}}},
		llmtest.Reply{Text: []string{"finally"}},
	)
	start := time.Now()
	resp, attempts, err := llm.Call(context.Background(), p, ask(), (&llmtest.Recorder{}).Sent, llm.CallOptions{MaxRetries: 2, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed < time.Second {
		t.Errorf("the call took %v: Retry-After: 1 was not honoured", elapsed)
	}
	equal(t, "attempts", len(attempts), 2)
	equal(t, "first status", attempts[0].Status, 429)
	equal(t, "first wait", attempts[0].WaitMS, int64(1000))
	if !strings.Contains(attempts[0].Error, "rate limit") {
		t.Errorf("attempt error %q lacks the provider's message", attempts[0].Error)
	}
	equal(t, "Content", resp.Content, "finally")
}

func TestServerErrorsRetried(t *testing.T) {
	t.Parallel()
	srv, p := setup(t)
	srv.Push(
		llmtest.Reply{Status: 500, ErrorMessage: "Internal server error"},
		llmtest.Reply{Status: 529, ErrorMessage: "Overloaded"},
		llmtest.Reply{Text: []string{"ok"}},
	)
	resp, attempts, err := llm.Call(context.Background(), p, ask(), (&llmtest.Recorder{}).Sent, llm.CallOptions{MaxRetries: 3, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "attempts", len(attempts), 3)
	equal(t, "statuses", []int{attempts[0].Status, attempts[1].Status}, []int{500, 529})
	equal(t, "first error", attempts[0].Error, "anthropic (500): Internal server error")
	equal(t, "Content", resp.Content, "ok")
}

func TestDisconnect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		cutAfter int // message_start, ping, content_block_start, then one chunk per text delta
		attempts int
		err      bool
	}{
		{name: "after content was emitted: not retried", cutAfter: 4, attempts: 1, err: true},
		{name: "before anything was emitted: retried", cutAfter: 2, attempts: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, p := setup(t)
			srv.Push(llmtest.Reply{Text: []string{"partial ", "answer"}, CutAfter: tt.cutAfter}, llmtest.Reply{Text: []string{"whole answer"}})
			rec := &llmtest.Recorder{}
			resp, attempts, err := llm.Call(context.Background(), p, ask(), rec.Sent, llm.CallOptions{MaxRetries: 2, Backoff: time.Millisecond})
			equal(t, "attempts", len(attempts), tt.attempts)
			equal(t, "requests", len(srv.Requests()), tt.attempts)
			if !tt.err {
				if err != nil {
					t.Fatal(err)
				}
				equal(t, "Content", resp.Content, "whole answer")
				return
			}
			pe := providerError(t, err)
			if pe.Status != 0 || pe.Message != llm.ErrIncomplete.Error() {
				t.Errorf("error %v: want an incomplete-stream transport error", pe)
			}
			equal(t, "events", rec.Texts(llm.EventContent), []string{"partial "})
		})
	}
}

func TestErrorEventMidStream(t *testing.T) {
	t.Parallel()
	tests := []struct {
		errType, message string
		status           int
		attempts         int
	}{
		{"overloaded_error", "Overloaded", 529, 2},
		{"api_error", "Internal server error", 500, 2},
		{"rate_limit_error", "Rate limited", 429, 2},
		{"invalid_request_error", "prompt is too long", 400, 1},
	}
	for _, tt := range tests {
		t.Run(tt.errType, func(t *testing.T) {
			t.Parallel()
			event := `{"type":"error","error":{"type":"` + tt.errType + `","message":"` + tt.message + `"}}`
			srv, _ := rawServer(t, sse(evStart, event), sse(evStart, event), sse(evStart, evTextStart, evTextDelta, evTextStop, evEnd, evStop))
			p := anthropicmsg.New(endpoint(srv.URL, testKey))

			_, err := p.Complete(context.Background(), ask(), (&llmtest.Recorder{}).Emit)
			pe := providerError(t, err)
			equal(t, "Status", pe.Status, tt.status)
			equal(t, "Message", pe.Message, tt.message)

			// Nothing was emitted before the error: llm.Call retries what is retryable.
			_, attempts, err := llm.Call(context.Background(), p, ask(), (&llmtest.Recorder{}).Sent, llm.CallOptions{MaxRetries: 2, Backoff: time.Millisecond})
			equal(t, "attempts", len(attempts), tt.attempts)
			if (err == nil) != (tt.attempts == 2) {
				t.Errorf("llm.Call error = %v", err)
			}
		})
	}
}

func TestBrokenStream(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, message string
	}{
		{"ends without message_stop", sse(evStart, evTextStart, evTextDelta, evTextStop, evEnd), llm.ErrIncomplete.Error()},
		{"empty answer", "", llm.ErrIncomplete.Error()},
		{"malformed JSON", "event: message_start\ndata: {\"type\":\"message_start\",\n\n", ""},
		{"delta of a block that never started", sse(evStart, evTextDelta, evStop), "never started"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := rawServer(t, tt.body)
			_, err := anthropicmsg.New(endpoint(srv.URL, testKey)).Complete(context.Background(), ask(), (&llmtest.Recorder{}).Emit)
			pe := providerError(t, err)
			if pe.Status != 0 || !pe.Retryable() || !strings.Contains(pe.Message, tt.message) {
				t.Errorf("error %v: want a retryable transport error mentioning %q", pe, tt.message)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	_, err = anthropicmsg.New(endpoint(url, testKey)).Complete(context.Background(), ask(), (&llmtest.Recorder{}).Emit)
	pe := providerError(t, err)
	if pe.Status != 0 || pe.Message != "the connection was refused" {
		t.Errorf("error %v: want a refused connection", pe)
	}
}

func TestCancelledBeforeCall(t *testing.T) {
	t.Parallel()
	_, p := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := p.Complete(ctx, ask(), (&llmtest.Recorder{}).Emit)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}
