package gemini

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/genai"

	"github.com/agentplane/agentplane/internal/llm"
)

// The SDK turns an HTTP error answer into a genai.APIError that keeps the code and the
// message but drops the headers, so Retry-After would be lost. captureTransport wraps
// the Endpoint's transport and copies the headers of an error answer into the
// headerHolder that Complete or ListModels put in the request's context.

// headerKey is the context key of a call's *headerHolder.
type headerKey struct{}

// headerHolder keeps the headers of the last error answer of one call.
type headerHolder struct {
	mu sync.Mutex
	h  http.Header
}

func (hh *headerHolder) set(h http.Header) {
	hh.mu.Lock()
	hh.h = h
	hh.mu.Unlock()
}

func (hh *headerHolder) get() http.Header {
	hh.mu.Lock()
	defer hh.mu.Unlock()
	return hh.h
}

// withHeaderHolder returns ctx carrying a new holder, and the holder.
func withHeaderHolder(ctx context.Context) (context.Context, *headerHolder) {
	hh := &headerHolder{}
	return context.WithValue(ctx, headerKey{}, hh), hh
}

// captureTransport records the headers of error answers (status >= 400) in the holder
// of the request's context, if any.
type captureTransport struct{ base http.RoundTripper }

func (t captureTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err == nil && resp.StatusCode >= 400 {
		if hh, ok := r.Context().Value(headerKey{}).(*headerHolder); ok {
			hh.set(resp.Header.Clone())
		}
	}
	return resp, err
}

// captureClient returns a copy of c whose transport is wrapped by captureTransport;
// c itself is left alone (it may be shared by other providers).
func captureClient(c *http.Client) *http.Client {
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cc := *c
	cc.Transport = captureTransport{base: base}
	return &cc
}

// callError turns a failure the SDK reported into the llm error contract: an API error
// answer becomes llm.StatusError (with the headers the transport captured), anything
// else — connection failures, a cut or malformed stream — llm.TransportError, which
// returns ctx's error once ctx has ended.
func (p *Provider) callError(ctx context.Context, hold *headerHolder, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// The SDK returns APIError values; a pointer is accepted too, as the SDK itself does.
	var ae genai.APIError
	var pae *genai.APIError
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &pae) && pae != nil:
		ae = *pae
	default:
		return llm.TransportError(ctx, p.ep, err)
	}
	msg := ae.Message
	if msg == "" {
		msg = ae.Status
	}
	if ae.Code == 0 {
		// An error event inside a stream without a code: the stream failed, not the request.
		return llm.TransportError(ctx, p.ep, errors.New(msg))
	}
	e := llm.StatusError(p.ep, ae.Code, withRetryInfo(hold.get(), ae.Details), msg)
	e.KeyRejected = keyRejected(ae.Details)
	return e
}

// keyRejected reports whether an error's google.rpc.ErrorInfo detail says the API key was
// refused: the Gemini API answers an invalid key with 400 INVALID_ARGUMENT and reason
// API_KEY_INVALID, not with 401.
func keyRejected(details []map[string]any) bool {
	for _, d := range details {
		typ, _ := d["@type"].(string)
		reason, _ := d["reason"].(string)
		if strings.HasSuffix(typ, "google.rpc.ErrorInfo") && (reason == "API_KEY_INVALID" || reason == "API_KEY_EXPIRED") {
			return true
		}
	}
	return false
}

// withRetryInfo returns h with a Retry-After taken from the error's google.rpc.RetryInfo
// detail ({"retryDelay": "27s"}), which is how the Gemini API says when to retry a 429;
// a Retry-After header the answer carried wins.
func withRetryInfo(h http.Header, details []map[string]any) http.Header {
	if h.Get("Retry-After") != "" {
		return h
	}
	for _, d := range details {
		typ, _ := d["@type"].(string)
		delay, _ := d["retryDelay"].(string)
		if !strings.HasSuffix(typ, "google.rpc.RetryInfo") || delay == "" {
			continue
		}
		if dur, err := time.ParseDuration(delay); err == nil && dur > 0 {
			h = h.Clone()
			if h == nil {
				h = http.Header{}
			}
			h.Set("Retry-After", strconv.FormatFloat(dur.Seconds(), 'f', -1, 64))
		}
		break
	}
	return h
}
