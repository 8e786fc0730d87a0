// Package platform verifies, parses and answers the inbound calls of chat platforms.
package platform

import (
	"context"
	"net/http"
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

// For returns the platform of a trigger type: "slack", "telegram", "whatsapp", "teams", "webhook"; false for others.
func For(typ string) (Platform, bool) {
	return nil, false
}
