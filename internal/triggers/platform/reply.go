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
	"strings"
	"unicode/utf8"
)

// APIError is a platform API's refusal of a reply: an HTTP error status or an ok:false answer.
type APIError struct {
	Platform string // "slack", "telegram", "whatsapp"
	Status   int    // the HTTP status of the answer
	Code     string // the platform's error code (Slack "channel_not_found", Telegram error_code, Graph error code)
	Message  string // the platform's description, when it gave one
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

// postJSON POSTs v as JSON to u with the given bearer token (if any) and decodes the answer into
// out. It returns the HTTP status; transport errors are returned with the URL replaced by redacted
// (Telegram puts the bot token in the path, and *url.Error prints it).
func postJSON(ctx context.Context, hc *http.Client, u, bearer, redacted string, v, out any) (int, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	body, err := json.Marshal(v)
	if err != nil {
		return 0, fmt.Errorf("encode reply: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("build request to %s: %w", redacted, redactURL(err, redacted))
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Accept", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, redactURL(err, redacted)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return resp.StatusCode, fmt.Errorf("read answer of %s: %w", redacted, redactURL(err, redacted))
	}
	if err := json.Unmarshal(raw, out); err != nil {
		// A non-JSON answer (a proxy's HTML error page, say) is reported by its status.
		return resp.StatusCode, &APIError{Status: resp.StatusCode, Message: "answer is not JSON: " + snippet(raw)}
	}
	return resp.StatusCode, nil
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
