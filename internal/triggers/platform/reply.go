package platform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// APIError is a platform API's refusal of a reply: an HTTP error status or an ok:false answer.
type APIError struct {
	Platform string // "slack", "telegram", "whatsapp"
	Status   int    // the HTTP status of the answer
	Code     string // the platform's error code (Slack "channel_not_found", Telegram error_code, Graph error code)
	Message  string // the platform's description, when it gave one
	// RetryAfter is how long the platform asked to wait before sending again (Slack's
	// Retry-After header, Telegram's parameters.retry_after on a 429); zero when it did not say.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	msg := fmt.Sprintf("%s API: HTTP %d", e.Platform, e.Status)
	if e.Code != "" {
		msg += " " + e.Code
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// maxAnswer bounds how much of a platform API's answer is read.
const maxAnswer = 1 << 20

// ErrEmptyReply is returned by Reply for an empty answer text: every platform refuses one.
var ErrEmptyReply = errors.New("reply text is empty")

// answer is the HTTP status and the Retry-After header of a platform API's answer.
type answer struct {
	Status     int
	RetryAfter time.Duration
}

// postJSON POSTs v as JSON to u with the given bearer token (if any) and decodes the answer into
// out. Transport errors are returned with the URL replaced by redacted (Telegram puts the bot
// token in the path, and *url.Error prints it).
func postJSON(ctx context.Context, hc *http.Client, u, bearer, redacted string, v, out any) (answer, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	body, err := json.Marshal(v)
	if err != nil {
		return answer{}, fmt.Errorf("encode reply: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return answer{}, fmt.Errorf("build request to %s: %w", redacted, redactURL(err, redacted))
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Accept", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return answer{}, redactURL(err, redacted)
	}
	defer resp.Body.Close()
	a := answer{Status: resp.StatusCode}
	if sec, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && sec > 0 {
		a.RetryAfter = time.Duration(sec) * time.Second
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return a, fmt.Errorf("read answer of %s: %w", redacted, redactURL(err, redacted))
	}
	if err := json.Unmarshal(raw, out); err != nil {
		// A non-JSON answer (a proxy's HTML error page, say) is reported by its status.
		return a, &APIError{Status: a.Status, Message: "answer is not JSON: " + snippet(raw), RetryAfter: a.RetryAfter}
	}
	return a, nil
}

// redactURL replaces the URL of a *url.Error so the error can be logged without the token.
func redactURL(err error, redacted string) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return &url.Error{Op: ue.Op, URL: redacted, Err: ue.Err}
	}
	return err
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	return s
}

// splitText cuts text into pieces of at most max runes, preferring to cut after a newline, then
// after a space, so long answers fit platforms with a per-message limit.
func splitText(text string, max int) []string {
	var parts []string
	for utf8.RuneCountInString(text) > max {
		// Byte offset of the rune boundary after max runes.
		cut, n := 0, 0
		for i := range text {
			if n == max {
				cut = i
				break
			}
			n++
		}
		head := text[:cut]
		if i := strings.LastIndexByte(head, '\n'); i > cut/2 {
			cut = i + 1
		} else if i := strings.LastIndexByte(head, ' '); i > cut/2 {
			cut = i + 1
		}
		parts = append(parts, text[:cut])
		text = text[cut:]
	}
	if text != "" {
		parts = append(parts, text)
	}
	return parts
}
