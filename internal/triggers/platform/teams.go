package platform

import (
	"context"
	"crypto/hmac"
	"encoding/base64"
	"encoding/json"
	"errors"
	"html"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// Teams is a Microsoft Teams outgoing webhook
// (https://learn.microsoft.com/microsoftteams/platform/webhooks-and-connectors/how-to/add-outgoing-webhook).
//
// Teams signs each call with Authorization: "HMAC " + base64 HMAC-SHA256 of the body, keyed with
// the base64-decoded security token Teams shows once when the webhook is created. The call is a
// Bot Framework message activity sent when someone @mentions the webhook; the answer must be
// written in the response body within 5 s, so Teams is Sync. Teams signs no timestamp: the
// activity id is the DedupKey, so a replayed call runs nothing.
type Teams struct{}

var _ Platform = Teams{}

// TypeTeams is the trigger type of a Microsoft Teams outgoing webhook.
const TypeTeams = "teams"

func init() {
	Register(Spec{
		Type: TypeTeams,
		Doc:  "teams: hmac_secret (the base64 security token Teams shows).",
		Fields: []Field{
			{Name: "hmac_secret", Kind: KindSecret, Required: true, Check: checkTeamsSecret},
		},
		Platform: Teams{}, Chat: true,
	})
}

// checkTeamsSecret accepts the base64 security token Teams shows.
func checkTeamsSecret(v string) error {
	if b, err := base64.StdEncoding.DecodeString(v); err != nil || len(b) == 0 {
		return errors.New("must be the base64 security token Microsoft Teams shows when the outgoing webhook is created")
	}
	return nil
}

// decodeTeamsSecret decodes the base64 security token Teams issues.
func decodeTeamsSecret(s string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil || len(key) == 0 {
		return nil, errors.New("must be the base64 security token Teams issued")
	}
	return key, nil
}

// Verify checks the Authorization HMAC.
func (Teams) Verify(r *http.Request, body []byte, cfg Config, now time.Time) error {
	secret := cfg.str("hmac_secret")
	if secret == "" {
		return verifyErr("trigger has no hmac_secret")
	}
	key, err := decodeTeamsSecret(secret)
	if err != nil {
		return verifyErr("trigger hmac_secret: %v", err)
	}
	auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "HMAC ")
	if !ok {
		return verifyErr("missing Authorization: HMAC header")
	}
	got, err := base64.StdEncoding.DecodeString(strings.TrimSpace(auth))
	if err != nil {
		return verifyErr("Authorization HMAC is not base64")
	}
	if !hmac.Equal(got, macSHA256(key, body)) {
		return verifyErr("Authorization HMAC does not match")
	}
	return nil
}

// teamsActivity is the part of a message activity this package reads.
type teamsActivity struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Text string `json:"text"`
	From struct {
		ID          string `json:"id"`
		AADObjectID string `json:"aadObjectId"`
	} `json:"from"`
	Conversation struct {
		ID string `json:"id"`
	} `json:"conversation"`
}

var (
	teamsMention = regexp.MustCompile(`(?s)<at>.*?</at>`)
	teamsTag     = regexp.MustCompile(`<[^>]*>`)
	teamsSpaces  = regexp.MustCompile(`[ \t]{2,}`)
)

// teamsText is the text the user typed: the <at>webhook</at> mention removed, the light HTML
// Teams wraps messages in stripped, entities decoded, runs of spaces left by removed mentions
// collapsed and the ends trimmed.
func teamsText(s string) string {
	s = teamsMention.ReplaceAllString(s, "")
	s = teamsTag.ReplaceAllString(s, "")
	s = html.UnescapeString(s)
	s = strings.ReplaceAll(s, "\u00a0", " ")
	s = teamsSpaces.ReplaceAllString(s, " ")
	return strings.TrimSpace(s)
}

// Parse returns the message activity: Text without the mention, ConversationKey conversation.id
// (a channel thread's id includes its root message, so a thread is one conversation), User the
// sender's AAD object id (the Teams user id when absent).
func (Teams) Parse(r *http.Request, body []byte, cfg Config) (*Event, error) {
	var a teamsActivity
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, parseErr("Teams activity is not JSON")
	}
	if a.Type != "message" {
		return respondOnly(teamsMessage("")), nil
	}
	if a.Conversation.ID == "" {
		return nil, parseErr("Teams activity without conversation.id")
	}
	user := a.From.AADObjectID
	if user == "" {
		user = a.From.ID
	}
	var payload map[string]any
	if err := json.Unmarshal(body, &payload); err != nil {
		return nil, parseErr("Teams activity is not a JSON object")
	}
	return &Event{
		DedupKey:        a.ID,
		ConversationKey: a.Conversation.ID,
		User:            user,
		Text:            teamsText(a.Text),
		Payload:         payload,
		ReplyTo:         map[string]string{"conversation_id": a.Conversation.ID},
	}, nil
}

// Reply sends nothing: it returns the 200 message activity the caller writes as the answer to the
// pending Teams call. Teams renders its text as Markdown.
func (Teams) Reply(ctx context.Context, hc *http.Client, cred Credential, ev *Event, text string) (*Response, error) {
	return teamsMessage(text), nil
}

// Sync reports true: Teams takes the answer in the response body.
func (Teams) Sync() bool { return true }

func teamsMessage(text string) *Response {
	b, _ := json.Marshal(map[string]string{"type": "message", "text": text})
	return &Response{Status: http.StatusOK, ContentType: "application/json", Body: b}
}
