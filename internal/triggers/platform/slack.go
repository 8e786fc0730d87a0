package platform

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Slack is the Slack Events API (https://api.slack.com/apis/events-api).
//
// Every call is signed: X-Slack-Signature is "v0=" + hex HMAC-SHA256, keyed with the app's
// signing secret, of "v0:" + X-Slack-Request-Timestamp + ":" + body, and the timestamp must be
// within Tolerance. The url_verification handshake is answered with its challenge. message and
// app_mention events from people start a run; the bot's own messages (bot_id, subtype
// bot_message, or the installing bot user of the authorizations block or config bot_user_id),
// edits, deletions and every other event are answered 200 and ignored.
//
// Slack retries an event it did not get a 2xx for within 3 s, with X-Slack-Retry-Num set and the
// same event_id, which is the DedupKey.
type Slack struct{}

var _ Platform = Slack{}

// TypeSlack is the trigger type of the Slack Events API.
const TypeSlack = "slack"

func init() {
	Register(Spec{
		Type: TypeSlack,
		Doc:  "slack: signing_secret, bot_credential_id, bot_user_id (optional: the bot's own user id, whose messages are ignored).",
		Fields: []Field{
			{Name: "signing_secret", Kind: KindSecret, Required: true},
			{Name: "bot_credential_id", Kind: KindCredential, Required: true},
			{Name: "bot_user_id", Kind: KindText},
		},
		Platform: Slack{}, Chat: true, ReplyCredential: "bot_credential_id",
	})
}

// SlackBaseURL is the Slack Web API base used when the credential names none.
const SlackBaseURL = "https://slack.com"

// Verify checks the v0 signature and the timestamp window.
func (Slack) Verify(r *http.Request, body []byte, cfg Config, now time.Time) error {
	secret := cfg.str("signing_secret")
	if secret == "" {
		return verifyErr("trigger has no signing_secret")
	}
	ts := r.Header.Get("X-Slack-Request-Timestamp")
	if err := checkTimestamp(ts, now); err != nil {
		return err
	}
	got, err := hexSignature(r, "X-Slack-Signature", "v0=", "missing or unversioned X-Slack-Signature")
	if err != nil {
		return err
	}
	if !hmac.Equal(got, slackSignature(secret, ts, body)) {
		return verifyErr("X-Slack-Signature does not match")
	}
	return nil
}

// slackSignature is the raw HMAC of Slack's v0 base string.
func slackSignature(secret, ts string, body []byte) []byte {
	return macSHA256([]byte(secret), []byte("v0:"+ts+":"), body)
}

// slackEnvelope is the part of an Events API call this package reads.
type slackEnvelope struct {
	Type           string `json:"type"`
	Challenge      string `json:"challenge"`
	TeamID         string `json:"team_id"`
	EventID        string `json:"event_id"`
	Authorizations []struct {
		UserID string `json:"user_id"`
		IsBot  bool   `json:"is_bot"`
	} `json:"authorizations"`
	Event *struct {
		Type        string `json:"type"`
		Subtype     string `json:"subtype"`
		User        string `json:"user"`
		BotID       string `json:"bot_id"`
		Text        string `json:"text"`
		Channel     string `json:"channel"`
		TS          string `json:"ts"`
		ThreadTS    string `json:"thread_ts"`
		Team        string `json:"team"`
		ChannelType string `json:"channel_type"`
	} `json:"event"`
}

// Parse answers url_verification, ignores what is not a person's message, and otherwise returns
// the message event with the bot's own <@mention> removed from its text:
// ConversationKey team:channel:thread (the thread's root ts, or the message's
// own ts when it starts one), ReplyTo channel and thread_ts so the answer lands in the thread.
// A direct message (channel_type im) outside a thread is keyed team:channel and answered in the
// DM without a thread, so a one-to-one chat keeps its history.
func (Slack) Parse(r *http.Request, body []byte, cfg Config) (*Event, error) {
	var env slackEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, parseErr("Slack event is not JSON")
	}
	switch env.Type {
	case "url_verification":
		if env.Challenge == "" {
			return nil, parseErr("url_verification without a challenge")
		}
		return respondOnly(&Response{Status: http.StatusOK, ContentType: "text/plain; charset=utf-8", Body: []byte(env.Challenge)}), nil
	case "event_callback":
	default:
		// app_rate_limited and future envelope types: acknowledge.
		return respondOnly(ignored()), nil
	}
	ev := env.Event
	if ev == nil {
		return nil, parseErr("event_callback without an event")
	}
	if ev.Type != "message" && ev.Type != "app_mention" {
		return respondOnly(ignored()), nil
	}
	switch ev.Subtype {
	case "", "thread_broadcast", "file_share":
	default:
		// bot_message, message_changed, message_deleted, channel_join, ...
		return respondOnly(ignored()), nil
	}
	bots := []string{}
	if id := cfg.str("bot_user_id"); id != "" {
		bots = append(bots, id)
	}
	for _, a := range env.Authorizations {
		if a.IsBot && a.UserID != "" {
			bots = append(bots, a.UserID)
		}
	}
	if ev.BotID != "" || ev.User == "" || slices.Contains(bots, ev.User) {
		return respondOnly(ignored()), nil
	}
	// The bot's own mention says who is asked, not what: the agent gets the rest.
	text := ev.Text
	for _, id := range bots {
		text = strings.ReplaceAll(text, "<@"+id+">", "")
	}
	text = strings.TrimSpace(text)
	if ev.Channel == "" || ev.TS == "" {
		return nil, parseErr("message event without channel or ts")
	}
	team := env.TeamID
	if team == "" {
		team = ev.Team
	}
	thread := ev.ThreadTS
	conv := team + ":" + ev.Channel + ":" + thread
	switch {
	case thread != "":
	case ev.ChannelType == "im":
		// A direct message outside a thread continues the DM's one conversation, answered in
		// the DM itself rather than in a new thread per message.
		conv = team + ":" + ev.Channel
	default:
		thread = ev.TS
		conv += thread
	}
	var payload map[string]any
	if err := json.Unmarshal(body, &payload); err != nil {
		return nil, parseErr("Slack event is not a JSON object")
	}
	return &Event{
		DedupKey:        env.EventID,
		ConversationKey: conv,
		User:            ev.User,
		Text:            text,
		Payload:         payload,
		ReplyTo:         map[string]string{"channel": ev.Channel, "thread_ts": thread},
	}, nil
}

// Reply posts text with chat.postMessage (Bearer bot token) into ev.ReplyTo's channel and thread.
// Slack answers HTTP 200 with ok:false for most failures; those come back as *APIError.
func (Slack) Reply(ctx context.Context, hc *http.Client, cred Credential, ev *Event, text string) (*Response, error) {
	if strings.TrimSpace(text) == "" {
		return nil, ErrEmptyReply
	}
	msg := map[string]string{"channel": ev.ReplyTo["channel"], "text": text}
	if ts := ev.ReplyTo["thread_ts"]; ts != "" {
		msg["thread_ts"] = ts
	}
	u := trimBase(cred.BaseURL, SlackBaseURL) + "/api/chat.postMessage"
	var out struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	a, err := postJSON(ctx, hc, u, cred.Token, u, msg, &out)
	if err != nil {
		return nil, apiErr(err, TypeSlack)
	}
	if a.Status/100 != 2 || !out.OK {
		return nil, &APIError{Platform: TypeSlack, Status: a.Status, Code: out.Error, RetryAfter: a.RetryAfter}
	}
	return nil, nil
}

// Sync reports false: Slack wants its 200 within 3 s and the answer through chat.postMessage.
func (Slack) Sync() bool { return false }

// apiErr names the platform on an *APIError from postJSON and passes other errors through.
func apiErr(err error, platform string) error {
	if ae, ok := err.(*APIError); ok {
		ae.Platform = platform
		return ae
	}
	return err
}
