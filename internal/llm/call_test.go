package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// scripted is a Provider that fails with the queued errors (after emitting the queued
// events of the same attempt), then answers.
type scripted struct {
	errs   []error
	events [][]Event // events emitted by attempt n before its error or answer
	calls  int
	block  bool // the answer waits for ctx
}

func (s *scripted) Complete(ctx context.Context, req Request, emit func(Event) error) (*Response, error) {
	n := s.calls
	s.calls++
	if n < len(s.events) {
		for _, ev := range s.events[n] {
			if err := emit(ev); err != nil {
				return nil, err
			}
		}
	}
	if n < len(s.errs) && s.errs[n] != nil {
		return nil, s.errs[n]
	}
	if s.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return &Response{Content: "ok", StopReason: StopEnd, Usage: Usage{PromptTokens: 3, CompletionTokens: 1}}, nil
}

func all(Event) bool { return true }

func TestCallRetries(t *testing.T) {
	t.Parallel()
	fast := CallOptions{MaxRetries: 2, Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}
	status := func(code int) error { return &Error{Provider: "openai", Status: code, Message: http.StatusText(code)} }
	for _, tc := range []struct {
		name     string
		p        *scripted
		opts     CallOptions
		attempts int
		wantErr  int // the status of the *Error expected; 0: success
	}{
		{"429 then success", &scripted{errs: []error{status(429)}}, fast, 2, 0},
		{"500 twice then success", &scripted{errs: []error{status(500), status(500)}}, fast, 3, 0},
		{"502, 503, 529 exhaust two retries", &scripted{errs: []error{status(502), status(503), status(529)}}, fast, 3, 529},
		{"connection error retried", &scripted{errs: []error{&Error{Provider: "openai", Message: "the connection was reset"}}}, fast, 2, 0},
		{"400 is not retried", &scripted{errs: []error{status(400)}}, fast, 1, 400},
		{"401 is not retried", &scripted{errs: []error{status(401)}}, fast, 1, 401},
		{"no retries configured", &scripted{errs: []error{status(429)}}, CallOptions{}, 1, 429},
		{"not after content reached the client", &scripted{errs: []error{status(500)}, events: [][]Event{{{Kind: EventContent, Text: "Hel"}}}}, fast, 1, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp, attempts, err := Call(context.Background(), tc.p, Request{}, all, tc.opts)
			if len(attempts) != tc.attempts || tc.p.calls != tc.attempts {
				t.Fatalf("%d attempts recorded, %d made; want %d", len(attempts), tc.p.calls, tc.attempts)
			}
			for i, a := range attempts {
				if a.Attempt != i+1 {
					t.Errorf("attempt %d numbered %d", i, a.Attempt)
				}
				if i < len(attempts)-1 && (a.Status == 0 && a.Error == "") {
					t.Errorf("failed attempt %d records nothing: %+v", i, a)
				}
			}
			if tc.wantErr == 0 {
				if err != nil || resp.Content != "ok" {
					t.Fatalf("got %v, %v", resp, err)
				}
				return
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.Status != tc.wantErr || attempts[len(attempts)-1].Status != tc.wantErr {
				t.Fatalf("got %v, want status %d", err, tc.wantErr)
			}
		})
	}
}

func TestCallRetriesAfterEventsKeptFromTheClient(t *testing.T) {
	t.Parallel()
	p := &scripted{errs: []error{&Error{Provider: "x", Status: 503}}, events: [][]Event{{{Kind: EventContent, Text: "draft"}}}}
	kept := func(Event) bool { return false } // an intermediate step: content is not streamed
	resp, attempts, err := Call(context.Background(), p, Request{}, kept, CallOptions{MaxRetries: 1, Backoff: time.Millisecond})
	if err != nil || resp == nil || len(attempts) != 2 {
		t.Fatalf("got %v, %d attempts, %v", resp, len(attempts), err)
	}
}

func TestCallHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	p := &scripted{errs: []error{&Error{Provider: "x", Status: 429, RetryAfter: 150 * time.Millisecond}}}
	start := time.Now()
	_, attempts, err := Call(context.Background(), p, Request{}, all, CallOptions{MaxRetries: 1, Backoff: time.Millisecond})
	if err != nil || time.Since(start) < 150*time.Millisecond || attempts[0].WaitMS != 150 {
		t.Fatalf("waited %v, attempts %+v, %v", time.Since(start), attempts, err)
	}
	// A wait beyond the cap fails at once with the provider's error.
	p = &scripted{errs: []error{&Error{Provider: "x", Status: 429, RetryAfter: time.Hour}}}
	start = time.Now()
	if _, attempts, err = Call(context.Background(), p, Request{}, all, CallOptions{MaxRetries: 1}); err == nil || len(attempts) != 1 || time.Since(start) > time.Second {
		t.Fatalf("an hour's Retry-After: %v after %v", err, time.Since(start))
	}
}

func TestCallTimeoutAndCancel(t *testing.T) {
	t.Parallel()
	_, _, err := Call(context.Background(), &scripted{block: true}, Request{}, all, CallOptions{Timeout: 20 * time.Millisecond})
	var te *TimeoutError
	if !errors.As(err, &te) || te.Timeout != 20*time.Millisecond || !strings.Contains(err.Error(), "20 ms") {
		t.Fatalf("timeout: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	_, _, err = Call(ctx, &scripted{block: true}, Request{}, all, CallOptions{Timeout: time.Minute})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: %v", err)
	}
	// A cancel during the backoff ends the wait.
	ctx, cancel = context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	start := time.Now()
	_, _, err = Call(ctx, &scripted{errs: []error{&Error{Provider: "x", Status: 503, RetryAfter: 10 * time.Second}}}, Request{}, all, CallOptions{MaxRetries: 1})
	if !errors.Is(err, context.Canceled) || time.Since(start) > time.Second {
		t.Fatalf("cancel in backoff: %v after %v", err, time.Since(start))
	}
}

func TestCallEstimatesMissingUsage(t *testing.T) {
	t.Parallel()
	p := providerFunc(func(context.Context, Request, func(Event) error) (*Response, error) {
		return &Response{Content: "four words of answer", StopReason: StopEnd}, nil
	})
	req := Request{Messages: []Message{{Role: RoleUser, Content: "how many tokens is this prompt"}}}
	resp, _, err := Call(context.Background(), p, req, all, CallOptions{})
	if err != nil || !resp.Usage.Estimated || resp.Usage.PromptTokens != CountTokens("how many tokens is this prompt") ||
		resp.Usage.CompletionTokens != CountTokens("four words of answer") {
		t.Fatalf("usage %+v, %v", resp.Usage, err)
	}
}

type providerFunc func(context.Context, Request, func(Event) error) (*Response, error)

func (f providerFunc) Complete(ctx context.Context, req Request, emit func(Event) error) (*Response, error) {
	return f(ctx, req, emit)
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	o := CallOptions{Backoff: 100 * time.Millisecond, MaxBackoff: time.Second}
	for n, want := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second} {
		for range 50 {
			if d := o.backoff(n); d < want/2 || d > want {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", n, d, want/2, want)
			}
		}
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"2"}}, 2 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(3 * time.Second).Format(http.TimeFormat)}}, 3 * time.Second},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After": {"-1"}}, 0},
		{nil, 0},
	} {
		if got := RetryAfter(tc.h, now); got != tc.want {
			t.Errorf("RetryAfter(%v) = %v, want %v", tc.h, got, tc.want)
		}
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	key := "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789wxyz"
	for _, msg := range []string{
		"Incorrect API key provided: sk-proj-********************************************wxyz. You can find your API key at https://platform.openai.com/account/api-keys.",
		"Incorrect API key provided: sk-proj-AbC...wxyz.",
		"bad key " + key,
		`{"key":"` + key + `"}`,
	} {
		got := Redact(msg, key)
		if strings.Contains(got, "wxyz") || strings.Contains(got, key) || !strings.Contains(got, "[redacted]") {
			t.Errorf("Redact(%q) = %q", msg, got)
		}
	}
	if got := Redact("Rate limit reached for gpt-4o in organization org-123", key); got != "Rate limit reached for gpt-4o in organization org-123" {
		t.Errorf("a message without the key changed: %q", got)
	}
	err := StatusError(Endpoint{Provider: "openai", APIKey: key}, 401, nil, "Incorrect API key provided: "+key)
	if strings.Contains(err.Error(), key) || !err.Rejected() || err.Retryable() {
		t.Errorf("StatusError: %v", err)
	}
}

type permanentErr struct{}

func (permanentErr) Error() string   { return "refused by policy" }
func (permanentErr) Permanent() bool { return true }

// A connection failure another attempt cannot fix (the egress policy refused the address) is
// not retried; other connection failures are.
func TestTransportErrorPermanent(t *testing.T) {
	t.Parallel()
	ep := Endpoint{Provider: "openai"}
	var pe *Error
	if err := TransportError(context.Background(), ep, fmt.Errorf("dial: %w", permanentErr{})); !errors.As(err, &pe) || pe.Retryable() || !strings.Contains(pe.Message, "refused by policy") {
		t.Fatalf("permanent: %v", err)
	}
	if err := TransportError(context.Background(), ep, errors.New("connection reset")); !errors.As(err, &pe) || !pe.Retryable() {
		t.Fatalf("transient: %v", err)
	}
}
