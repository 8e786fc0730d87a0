package platform

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Telegram is the Telegram Bot API webhook (https://core.telegram.org/bots/api#setwebhook).
//
// Telegram sends the secret_token given to setWebhook in X-Telegram-Bot-Api-Secret-Token on every
// update; it is compared in constant time. Updates carrying a text message from a person start a
// run; every other update (edits, channel posts, joins, stickers, other bots) is answered 200 and
// ignored so Telegram does not retry it. Telegram retries an update until it gets a 2xx, with the
// same update_id, which is the DedupKey.
type Telegram struct{}

var _ Platform = Telegram{}

// TypeTelegram is the trigger type of the Telegram Bot API.
const TypeTelegram = "telegram"

func init() {
	Register(Spec{
		Type: TypeTelegram,
		Doc:  "telegram: secret_token, bot_credential_id.",
		Fields: []Field{
			{Name: "secret_token", Kind: KindSecret, Required: true, Check: checkTelegramSecret},
			{Name: "bot_credential_id", Kind: KindCredential, Required: true},
		},
		Platform: Telegram{}, Chat: true, ReplyCredential: "bot_credential_id",
	})
}

// checkTelegramSecret applies setWebhook's rule for secret_token.
func checkTelegramSecret(v string) error {
	if !validTelegramSecret(v) {
		return errors.New("must be 1 to 256 characters of A-Z, a-z, 0-9, _ and - (Telegram's rule for secret_token)")
	}
	return nil
}

// TelegramBaseURL is the Bot API base used when the credential names none.
const TelegramBaseURL = "https://api.telegram.org"

// telegramMaxText is sendMessage's limit on text, in characters.
const telegramMaxText = 4096

// validTelegramSecret applies setWebhook's rule for secret_token: 1-256 of A-Z a-z 0-9 _ -.
func validTelegramSecret(s string) bool {
	if len(s) == 0 || len(s) > 256 {
		return false
	}
	for _, c := range s {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Verify compares the X-Telegram-Bot-Api-Secret-Token header with config secret_token.
func (Telegram) Verify(r *http.Request, body []byte, cfg Config, now time.Time) error {
	secret := cfg.str("secret_token")
	if secret == "" {
		return verifyErr("trigger has no secret_token")
	}
	got := r.Header.Get("X-Telegram-Bot-Api-Secret-Token")
	if got == "" {
		return verifyErr("missing X-Telegram-Bot-Api-Secret-Token")
	}
	if !equalString(got, secret) {
		return verifyErr("X-Telegram-Bot-Api-Secret-Token does not match")
	}
	return nil
}

// telegramUpdate is the part of an Update this package reads.
type telegramUpdate struct {
	UpdateID *int64 `json:"update_id"`
	Message  *struct {
		MessageID       int64 `json:"message_id"`
		MessageThreadID int64 `json:"message_thread_id"`
		IsTopicMessage  bool  `json:"is_topic_message"`
		From            *struct {
			ID    int64 `json:"id"`
			IsBot bool  `json:"is_bot"`
		} `json:"from"`
		Chat struct {
			ID int64 `json:"id"`
		} `json:"chat"`
		Text string `json:"text"`
	} `json:"message"`
}

// Parse returns the update's text message: DedupKey update_id, ConversationKey the chat id (chat
// id:topic id in a forum topic, so topics keep separate histories), User the sender's id, ReplyTo
// chat_id (and message_thread_id in a topic).
func (Telegram) Parse(r *http.Request, body []byte, cfg Config) (*Event, error) {
	var up telegramUpdate
	if err := json.Unmarshal(body, &up); err != nil {
		return nil, parseErr("Telegram update is not JSON")
	}
	if up.UpdateID == nil {
		return nil, parseErr("Telegram update without update_id")
	}
	m := up.Message
	if m == nil || m.Text == "" || m.From == nil || m.From.IsBot {
		return respondOnly(ignored()), nil
	}
	chat := strconv.FormatInt(m.Chat.ID, 10)
	conv := chat
	reply := map[string]string{"chat_id": chat}
	if m.IsTopicMessage && m.MessageThreadID != 0 {
		topic := strconv.FormatInt(m.MessageThreadID, 10)
		conv += ":" + topic
		reply["message_thread_id"] = topic
	}
	var payload map[string]any
	if err := json.Unmarshal(body, &payload); err != nil {
		return nil, parseErr("Telegram update is not a JSON object")
	}
	return &Event{
		DedupKey:        strconv.FormatInt(*up.UpdateID, 10),
		ConversationKey: conv,
		User:            strconv.FormatInt(m.From.ID, 10),
		Text:            m.Text,
		Payload:         payload,
		ReplyTo:         reply,
	}, nil
}

// Reply sends text with sendMessage, split into several messages when it exceeds Telegram's
// 4096-character limit. Telegram's ok:false answers come back as *APIError; the bot token, which
// Telegram puts in the URL path, never appears in an error.
func (Telegram) Reply(ctx context.Context, hc *http.Client, cred Credential, ev *Event, text string) (*Response, error) {
	if strings.TrimSpace(text) == "" {
		return nil, ErrEmptyReply
	}
	base := trimBase(cred.BaseURL, TelegramBaseURL)
	u := base + "/bot" + cred.Token + "/sendMessage"
	redacted := base + "/bot<token>/sendMessage"
	for _, part := range splitText(text, telegramMaxText) {
		msg := map[string]any{"chat_id": telegramID(ev.ReplyTo["chat_id"]), "text": part}
		if t := ev.ReplyTo["message_thread_id"]; t != "" {
			msg["message_thread_id"] = telegramID(t)
		}
		var out struct {
			OK          bool   `json:"ok"`
			ErrorCode   int    `json:"error_code"`
			Description string `json:"description"`
			Parameters  struct {
				RetryAfter int `json:"retry_after"`
			} `json:"parameters"`
		}
		a, err := postJSON(ctx, hc, u, "", redacted, msg, &out)
		if err != nil {
			return nil, apiErr(err, TypeTelegram)
		}
		if a.Status/100 != 2 || !out.OK {
			ae := &APIError{Platform: TypeTelegram, Status: a.Status, Message: out.Description, RetryAfter: a.RetryAfter}
			if out.ErrorCode != 0 {
				ae.Code = strconv.Itoa(out.ErrorCode)
			}
			if out.Parameters.RetryAfter > 0 {
				ae.RetryAfter = time.Duration(out.Parameters.RetryAfter) * time.Second
			}
			return nil, ae
		}
	}
	return nil, nil
}

// Sync reports false: the answer goes through sendMessage.
func (Telegram) Sync() bool { return false }

// telegramID sends a numeric id as a JSON number, as the Bot API documents it, and anything else
// (a @channelusername) as a string.
func telegramID(s string) any {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	return s
}
