package platform

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// WhatsApp is the WhatsApp Cloud API webhook
// (https://developers.facebook.com/docs/whatsapp/cloud-api/guides/set-up-webhooks).
//
// Meta first checks the callback URL with a GET carrying hub.mode=subscribe, hub.verify_token and
// hub.challenge: when the token matches config verify_token, Parse answers 200 with the challenge
// as text/plain; when it does not, Verify fails and the caller answers 401, which Meta reports as
// a failed verification. Every POST carries X-Hub-Signature-256: "sha256=" + hex HMAC-SHA256 of
// the body keyed with the app secret.
//
// A POST starts a run for the first text message of the notification (Cloud API notifications
// carry one message; text, button and interactive replies are read as text). Status updates
// (sent, delivered, read), other message types and messages to another phone_number_id than the
// trigger's are answered 200 and ignored. Meta retries a notification with the same message id
// (wamid), which is the DedupKey.
type WhatsApp struct{}

var _ Platform = WhatsApp{}

// TypeWhatsApp is the trigger type of the WhatsApp Cloud API.
const TypeWhatsApp = "whatsapp"

func init() {
	Register(Spec{
		Type: TypeWhatsApp,
		Doc:  "whatsapp: verify_token, app_secret, phone_number_id, credential_id.",
		Fields: []Field{
			{Name: "verify_token", Kind: KindSecret, Required: true},
			{Name: "app_secret", Kind: KindSecret, Required: true},
			{Name: "phone_number_id", Kind: KindText, Required: true},
			{Name: "credential_id", Kind: KindCredential, Required: true},
		},
		Platform: WhatsApp{}, Chat: true, HookGET: true, ReplyCredential: "credential_id",
	})
}

// WhatsAppBaseURL is the Graph API base used when the credential names none.
const WhatsAppBaseURL = "https://graph.facebook.com"

// GraphAPIVersion is the Graph API version replies are sent with.
const GraphAPIVersion = "v21.0"

// whatsappMaxText is the Cloud API's limit on a text message body, in characters.
const whatsappMaxText = 4096

// Verify checks the GET handshake's verify token, or a POST's X-Hub-Signature-256.
func (WhatsApp) Verify(r *http.Request, body []byte, cfg Config, now time.Time) error {
	if r.Method == http.MethodGet {
		want := cfg.str("verify_token")
		if want == "" {
			return verifyErr("trigger has no verify_token")
		}
		q := r.URL.Query()
		if q.Get("hub.mode") != "subscribe" {
			return verifyErr("hub.mode is not subscribe")
		}
		if got := q.Get("hub.verify_token"); got == "" || !equalString(got, want) {
			return verifyErr("hub.verify_token does not match")
		}
		return nil
	}
	secret := cfg.str("app_secret")
	if secret == "" {
		return verifyErr("trigger has no app_secret")
	}
	got, err := hexSignature(r, "X-Hub-Signature-256", "sha256=", "missing X-Hub-Signature-256")
	if err != nil {
		return err
	}
	if !hmac.Equal(got, macSHA256([]byte(secret), body)) {
		return verifyErr("X-Hub-Signature-256 does not match")
	}
	return nil
}

// whatsappNotification is the part of a webhook notification this package reads.
type whatsappNotification struct {
	Object string `json:"object"`
	Entry  []struct {
		Changes []struct {
			Field string `json:"field"`
			Value struct {
				Metadata struct {
					PhoneNumberID string `json:"phone_number_id"`
				} `json:"metadata"`
				Messages []whatsappMessage `json:"messages"`
			} `json:"value"`
		} `json:"changes"`
	} `json:"entry"`
}

type whatsappMessage struct {
	From string `json:"from"`
	ID   string `json:"id"`
	Type string `json:"type"`
	Text *struct {
		Body string `json:"body"`
	} `json:"text"`
	Button *struct {
		Text string `json:"text"`
	} `json:"button"`
	Interactive *struct {
		ButtonReply *struct {
			Title string `json:"title"`
		} `json:"button_reply"`
		ListReply *struct {
			Title string `json:"title"`
		} `json:"list_reply"`
	} `json:"interactive"`
}

// text returns what the user wrote or chose, or "" for messages without text.
func (m whatsappMessage) text() string {
	switch m.Type {
	case "text":
		if m.Text != nil {
			return m.Text.Body
		}
	case "button":
		if m.Button != nil {
			return m.Button.Text
		}
	case "interactive":
		if i := m.Interactive; i != nil {
			if i.ButtonReply != nil {
				return i.ButtonReply.Title
			}
			if i.ListReply != nil {
				return i.ListReply.Title
			}
		}
	}
	return ""
}

// Parse answers the GET handshake with hub.challenge, and turns a POST's first text message into
// an Event: DedupKey the message id, ConversationKey and User the sender's number, ReplyTo to
// and the phone_number_id the answer is sent from (config phone_number_id, else the one the
// message was sent to).
func (WhatsApp) Parse(r *http.Request, body []byte, cfg Config) (*Event, error) {
	if r.Method == http.MethodGet {
		challenge := r.URL.Query().Get("hub.challenge")
		if challenge == "" {
			return nil, parseErr("handshake without hub.challenge")
		}
		return respondOnly(&Response{Status: http.StatusOK, ContentType: "text/plain; charset=utf-8", Body: []byte(challenge)}), nil
	}
	var n whatsappNotification
	if err := json.Unmarshal(body, &n); err != nil {
		return nil, parseErr("WhatsApp notification is not JSON")
	}
	phone := cfg.str("phone_number_id")
	for _, e := range n.Entry {
		for _, c := range e.Changes {
			if c.Field != "" && c.Field != "messages" {
				continue
			}
			if phone != "" && c.Value.Metadata.PhoneNumberID != "" && c.Value.Metadata.PhoneNumberID != phone {
				continue
			}
			for _, m := range c.Value.Messages {
				text := m.text()
				if text == "" || m.From == "" || m.ID == "" {
					continue
				}
				from := phone
				if from == "" {
					from = c.Value.Metadata.PhoneNumberID
				}
				var payload map[string]any
				if err := json.Unmarshal(body, &payload); err != nil {
					return nil, parseErr("WhatsApp notification is not a JSON object")
				}
				return &Event{
					DedupKey:        m.ID,
					ConversationKey: m.From,
					User:            m.From,
					Text:            text,
					Payload:         payload,
					ReplyTo:         map[string]string{"to": m.From, "message_id": m.ID, "phone_number_id": from},
				}, nil
			}
		}
	}
	return respondOnly(ignored()), nil
}

// Reply sends text to ReplyTo's number through the Graph messages endpoint of ReplyTo's
// phone_number_id, with the access token as Bearer, split at the Cloud API's
// 4096-character limit. Graph errors come back as *APIError with Graph's code and message.
func (WhatsApp) Reply(ctx context.Context, hc *http.Client, cred Credential, ev *Event, text string) (*Response, error) {
	if strings.TrimSpace(text) == "" {
		return nil, ErrEmptyReply
	}
	phone := ev.ReplyTo["phone_number_id"]
	if phone == "" {
		return nil, &APIError{Platform: TypeWhatsApp, Message: "no phone_number_id to send from"}
	}
	u := trimBase(cred.BaseURL, WhatsAppBaseURL) + "/" + GraphAPIVersion + "/" + url.PathEscape(phone) + "/messages"
	for _, part := range splitText(text, whatsappMaxText) {
		msg := map[string]any{
			"messaging_product": "whatsapp",
			"recipient_type":    "individual",
			"to":                ev.ReplyTo["to"],
			"type":              "text",
			"text":              map[string]any{"body": part},
		}
		var out struct {
			Error *struct {
				Message string `json:"message"`
				Type    string `json:"type"`
				Code    int    `json:"code"`
			} `json:"error"`
		}
		a, err := postJSON(ctx, hc, u, cred.Token, u, msg, &out)
		if err != nil {
			return nil, apiErr(err, TypeWhatsApp)
		}
		if a.Status/100 != 2 || out.Error != nil {
			ae := &APIError{Platform: TypeWhatsApp, Status: a.Status, RetryAfter: a.RetryAfter}
			if out.Error != nil {
				ae.Code = strconv.Itoa(out.Error.Code)
				ae.Message = out.Error.Message
			}
			return nil, ae
		}
	}
	return nil, nil
}

// Sync reports false: the answer goes through the Graph messages endpoint.
func (WhatsApp) Sync() bool { return false }
