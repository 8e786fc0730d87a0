// Package platform verifies, parses and answers the inbound calls of chat platforms.
//
// The hook endpoint drives one Platform per trigger type in three steps:
//
//  1. Verify the raw call (signature, shared secret, timestamp) against the trigger's decrypted
//     config. Any error means 401 and nothing runs; the error text is safe to log but is not
//     meant for the caller.
//  2. Parse the verified call into an Event. An Event with Respond set is answered as is and
//     runs nothing (a handshake, the bot's own message, an event that is not a message). Any
//     other Event starts a run; DedupKey lets the caller answer platform retries once.
//  3. Reply with the agent's answer: through the platform's API (Slack, Telegram, WhatsApp), or,
//     for Sync platforms (Teams), as the Response the caller writes to the pending call. Reply
//     sends with hc (nil: http.DefaultClient), so pass the client the server uses for outbound
//     calls; the context bounds the whole reply.
//
// An Event's ReplyTo and ConversationKey are plain strings so the caller can store them with the
// run and reply when the run ends, on any node, even after a restart. Teams waits 5 s for its
// answer; a caller whose run takes longer writes a holding answer (Teams.Reply with a short text).
//
// Parse errors wrap ErrParse (a 400: the body is not what the platform sends); Verify errors wrap
// ErrVerify. Reply errors from a platform's API are *APIError. No error text ever contains a
// secret or a bot token.
package platform

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Config is a trigger's per-type config with its secrets decrypted.
type Config map[string]any

// Response is a complete HTTP answer the hook endpoint writes as is.
type Response struct {
	Status      int
	ContentType string
	Body        []byte
}

// Event is one verified inbound call.
type Event struct {
	Respond         *Response         // non-nil: write it and run nothing (Slack url_verification, WhatsApp GET handshake, the bot's own messages, non-message events)
	DedupKey        string            // unique id of the platform event for 24 h deduplication (Slack event_id, Telegram update_id, WhatsApp message id, webhook-id); empty: none
	ConversationKey string            // which chat session continues: Slack team+channel+thread, Telegram chat id, WhatsApp sender, Teams conversation id
	User            string            // the platform user id, used as end_user_id
	Text            string            // the user's message text
	Payload         map[string]any    // the parsed body, for the trigger's input_mapping
	ReplyTo         map[string]string // where the answer goes (channel + thread_ts, chat_id, to number, ...)
}

// Credential is the bot credential a reply is sent with; BaseURL overrides the platform's public API base (tests).
type Credential struct {
	Token   string
	BaseURL string
}

// Platform is one chat platform.
type Platform interface {
	// Verify checks the call's signature, secret or timestamp against cfg at time now; an error means 401 and nothing runs.
	Verify(r *http.Request, body []byte, cfg Config, now time.Time) error
	// Parse turns a verified call into an Event.
	Parse(r *http.Request, body []byte, cfg Config) (*Event, error)
	// Reply sends the agent's answer text to ev.ReplyTo. Sync platforms (Teams) return the Response to write instead and send nothing.
	Reply(ctx context.Context, hc *http.Client, cred Credential, ev *Event, text string) (*Response, error)
	// Sync reports whether the reply goes in the HTTP response body (Teams) rather than through the platform's API.
	Sync() bool
}

// Tolerance is how far a signed timestamp may be from now, either way (Slack and Standard
// Webhooks both use five minutes).
const Tolerance = 5 * time.Minute

// ErrVerify is wrapped by every Verify error: the call is not authentic, answer 401.
var ErrVerify = errors.New("verification failed")

// ErrParse is wrapped by every Parse error: the verified body is not a call this platform sends.
var ErrParse = errors.New("malformed call")

func verifyErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrVerify, fmt.Sprintf(format, args...))
}

func parseErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrParse, fmt.Sprintf(format, args...))
}

// str returns the string value of key, or "" when it is missing or not a string.
func (c Config) str(key string) string {
	s, _ := c[key].(string)
	return s
}

// checkTimestamp parses a Unix-seconds header and checks it lies within Tolerance of now.
func checkTimestamp(header string, now time.Time) error {
	if header == "" {
		return verifyErr("missing timestamp")
	}
	sec, err := strconv.ParseInt(header, 10, 64)
	if err != nil {
		return verifyErr("timestamp is not Unix seconds")
	}
	d := now.Sub(time.Unix(sec, 0))
	if d > Tolerance {
		return verifyErr("timestamp too old")
	}
	if d < -Tolerance {
		return verifyErr("timestamp too far in the future")
	}
	return nil
}

// macSHA256 is the HMAC-SHA256 of the parts, in order, with key.
func macSHA256(key []byte, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

// hexSignature returns the hex-decoded signature that header holds after prefix; missing is
// the error of a header without the prefix.
func hexSignature(r *http.Request, header, prefix, missing string) ([]byte, error) {
	sig, ok := strings.CutPrefix(r.Header.Get(header), prefix)
	if !ok {
		return nil, verifyErr("%s", missing)
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return nil, verifyErr("%s is not hex", header)
	}
	return got, nil
}

// equalString compares two secrets in constant time (for equal lengths).
func equalString(a, b string) bool {
	return hmac.Equal([]byte(a), []byte(b))
}

// ignored is the 200 a platform gets for a call that runs nothing, so it does not retry.
func ignored() *Response {
	return &Response{Status: http.StatusOK, ContentType: "application/json", Body: []byte(`{"ok":true,"ignored":true}`)}
}

// event returns an Event that only answers resp.
func respondOnly(resp *Response) *Event {
	return &Event{Respond: resp}
}

func trimBase(base, def string) string {
	if base == "" {
		return def
	}
	return strings.TrimRight(base, "/")
}
