package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Error is a provider's failure of one call: an HTTP error answer (Status set) or a
// connection that failed or ended before the answer was complete (Status 0).
type Error struct {
	Provider string // the service, e.g. "openai"
	Status   int    // HTTP status; 0 for a connection failure
	// Message is the provider's own message (or the connection error), with the API key
	// redacted: safe for responses, spans and logs.
	Message string
	// RetryAfter is how long the provider asked to wait (Retry-After or retry-after-ms).
	RetryAfter time.Duration
	// KeyRejected marks a refused credential reported with another status than 401/403
	// (Gemini answers an invalid key with 400 API_KEY_INVALID).
	KeyRejected bool
	// Permanent marks a connection failure another attempt cannot fix (the server's egress
	// policy refused the address, say).
	Permanent bool
}

// Error reads "openai (429): Rate limit reached" or "openai: connection reset by peer".
func (e *Error) Error() string {
	if e.Status == 0 {
		return e.Provider + ": " + e.Message
	}
	return fmt.Sprintf("%s (%d): %s", e.Provider, e.Status, e.Message)
}

// Retryable reports whether another attempt may succeed: a connection failure, a rate
// limit (429), or a server error that is usually transient (500, 502, 503, and
// Anthropic's 529 overloaded).
func (e *Error) Retryable() bool {
	if e.Permanent {
		return false
	}
	switch e.Status {
	case 0, http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, 529:
		return true
	}
	return false
}

// Rejected reports whether the provider refused the credential (401, 403, or a status
// the provider uses for it, see KeyRejected).
func (e *Error) Rejected() bool {
	return e.KeyRejected || e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden
}

// ErrIncomplete is the cause when a stream ended without the provider's end marker.
var ErrIncomplete = errors.New("the stream ended before the model finished its answer")

// StatusError builds the *Error of an HTTP error answer: message is the provider's own
// (redacted of key), header gives Retry-After.
func StatusError(ep Endpoint, status int, header http.Header, message string) *Error {
	message = strings.TrimSpace(message)
	if message == "" {
		message = http.StatusText(status)
	}
	return &Error{Provider: ep.Provider, Status: status, Message: Redact(message, ep.APIKey), RetryAfter: RetryAfter(header, time.Now())}
}

// TransportError turns a failure to reach the provider or to read its stream into an
// *Error with Status 0, unless ctx ended (then ctx's error is returned: a cancel or a
// timeout is not the provider's failure) or err is already an *Error.
func TransportError(ctx context.Context, ep Endpoint, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	msg := err.Error()
	switch {
	case errors.Is(err, ErrIncomplete), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		msg = ErrIncomplete.Error()
	case errors.Is(err, syscall.ECONNRESET):
		msg = "the connection was reset"
	case errors.Is(err, syscall.ECONNREFUSED):
		msg = "the connection was refused"
	default:
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			msg = "the connection timed out"
		}
	}
	var perm interface{ Permanent() bool }
	return &Error{Provider: ep.Provider, Message: Redact(msg, ep.APIKey), Permanent: errors.As(err, &perm) && perm.Permanent()}
}

// maxRetryAfter caps how long a Retry-After is honoured; a provider asking for more is
// not retried (the run fails with its message instead of hanging).
const maxRetryAfter = time.Minute

// RetryAfter reads how long to wait from retry-after-ms (OpenAI, Anthropic) or
// Retry-After (seconds or an HTTP date); 0 when neither is set or readable.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// Redact removes an API key from a provider's message: the key itself, and the masked
// forms providers echo ("Incorrect API key provided: sk-proj-****…1234"), so that no
// part of a key reaches a response, a span or a log.
func Redact(msg, key string) string {
	key = strings.TrimSpace(key)
	if key == "" || msg == "" {
		return msg
	}
	msg = strings.ReplaceAll(msg, key, "[redacted]")
	prefix := key[:min(3, len(key))]
	suffix := key[max(0, len(key)-4):]
	fields := strings.FieldsFunc(msg, func(r rune) bool { return r == ' ' || r == '\n' || r == '\t' || r == '"' || r == '\'' })
	for _, f := range fields {
		w := strings.TrimRight(f, ".,;:)")
		if len(w) < 6 || w == "[redacted]" {
			continue
		}
		masked := strings.Contains(w, "*") || strings.Contains(w, "…") || strings.Contains(w, "...")
		if (masked && (strings.HasPrefix(w, prefix) || strings.HasSuffix(w, suffix))) ||
			(len(suffix) == 4 && strings.HasPrefix(w, prefix) && strings.HasSuffix(w, suffix)) {
			msg = strings.ReplaceAll(msg, w, "[redacted]")
		}
	}
	return msg
}
