package llm

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// CallOptions bound one model call.
type CallOptions struct {
	// MaxRetries is how many times a retryable failure is tried again (0: never).
	MaxRetries int
	// Timeout bounds the whole call, retries included; 0 means no bound.
	Timeout time.Duration
	// Backoff is the wait before the first retry (default 500 ms); it doubles with each
	// retry up to MaxBackoff (default 8 s), and a random part of it (jitter) is dropped
	// so that callers failing together do not retry together.
	Backoff, MaxBackoff time.Duration
}

// Attempt is one try of a model call, recorded on its span.
type Attempt struct {
	Attempt    int    `json:"attempt"`
	DurationMS int64  `json:"duration_ms"`
	Status     int    `json:"status,omitempty"`
	Error      string `json:"error,omitempty"`
	// WaitMS is how long the call waited after this attempt before the next one.
	WaitMS int64 `json:"wait_ms,omitempty"`
}

// TimeoutError is the error of a call that did not finish within CallOptions.Timeout.
type TimeoutError struct{ Timeout time.Duration }

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("the model call did not finish within %d ms", e.Timeout.Milliseconds())
}

// Call makes one model call through p with retries: a retryable *Error (see
// Error.Retryable) is tried again after a backoff (or the provider's Retry-After), at most
// o.MaxRetries times, and only while nothing of the call has reached the client: emit
// passes each event on and reports whether it did (a caller that keeps some events to
// itself, like the content of an intermediate step, may still retry after them). It
// returns every attempt made, for the span. A call cut by o.Timeout returns
// *TimeoutError; one whose ctx ended returns ctx's error.
func Call(ctx context.Context, p Provider, req Request, emit func(Event) (sent bool), o CallOptions) (*Response, []Attempt, error) {
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.Timeout, &TimeoutError{Timeout: o.Timeout})
		defer cancel()
	}
	emitted := false
	track := func(ev Event) error {
		if emit(ev) {
			emitted = true
		}
		return nil
	}
	var attempts []Attempt
	for n := 0; ; n++ {
		start := time.Now()
		resp, err := p.Complete(ctx, req, track)
		a := Attempt{Attempt: n + 1, DurationMS: time.Since(start).Milliseconds()}
		if err == nil {
			attempts = append(attempts, a)
			if resp.Usage.PromptTokens == 0 && resp.Usage.CompletionTokens == 0 {
				resp.Usage = EstimateUsage(&req, resp)
			}
			return resp, attempts, nil
		}
		if ctx.Err() != nil {
			err = ctxError(ctx)
		}
		a.Error = err.Error()
		var pe *Error
		isProvider := errors.As(err, &pe)
		if isProvider {
			a.Status = pe.Status
		}
		if !isProvider || !pe.Retryable() || emitted || n >= o.MaxRetries || ctx.Err() != nil {
			attempts = append(attempts, a)
			return nil, attempts, err
		}
		wait := o.backoff(n)
		if pe.RetryAfter > 0 {
			if pe.RetryAfter > maxRetryAfter {
				attempts = append(attempts, a)
				return nil, attempts, err
			}
			wait = pe.RetryAfter
		}
		a.WaitMS = wait.Milliseconds()
		attempts = append(attempts, a)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, attempts, ctxError(ctx)
		case <-t.C:
		}
	}
}

// ctxError is the error of an ended call context: its *TimeoutError cause, else ctx.Err().
func ctxError(ctx context.Context) error {
	var te *TimeoutError
	if errors.As(context.Cause(ctx), &te) {
		return te
	}
	return ctx.Err()
}

// backoff is the wait before retry n+1: Backoff·2ⁿ capped at MaxBackoff, of which a
// random part up to one half is dropped.
func (o CallOptions) backoff(n int) time.Duration {
	base, ceiling := o.Backoff, o.MaxBackoff
	if base <= 0 {
		base = 500 * time.Millisecond
	}
	if ceiling <= 0 {
		ceiling = 8 * time.Second
	}
	d := base << min(n, 20)
	if d <= 0 || d > ceiling {
		d = ceiling
	}
	return d - time.Duration(rand.Int64N(int64(d)/2+1))
}
