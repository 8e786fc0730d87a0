package platform

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Slack's documented example from "Verifying requests from Slack".
const (
	slackDocSecret = "8f742231b10e8888abcd99yyyzzz85a5"
	slackDocTS     = "1531420618"
	slackDocBody   = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
	slackDocSig    = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
)

var slackDocNow = time.Unix(1531420618, 0)

// slackSign signs body the way Slack does, for calls built in tests.
func slackSign(secret, ts, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(m, "v0:%s:%s", ts, body)
	return "v0=" + hex.EncodeToString(m.Sum(nil))
}

func TestSlackVerify(t *testing.T) {
	t.Parallel()
	cfg := Config{"signing_secret": slackDocSecret}
	cases := []struct {
		name  string
		body  string
		ts    string
		sig   string
		cfg   Config
		now   time.Time
		valid bool
	}{
		{"documented example", slackDocBody, slackDocTS, slackDocSig, cfg, slackDocNow, true},
		{"4m59s later", slackDocBody, slackDocTS, slackDocSig, cfg, slackDocNow.Add(299 * time.Second), true},
		{"stale: 5m01s later", slackDocBody, slackDocTS, slackDocSig, cfg, slackDocNow.Add(301 * time.Second), false},
		{"from the future", slackDocBody, slackDocTS, slackDocSig, cfg, slackDocNow.Add(-301 * time.Second), false},
		{"tampered body", slackDocBody + "&x=1", slackDocTS, slackDocSig, cfg, slackDocNow, false},
		{"timestamp replaced", slackDocBody, "1531420619", slackDocSig, cfg, slackDocNow, false},
		{"wrong secret", slackDocBody, slackDocTS, slackDocSig, Config{"signing_secret": "8f742231b10e8888abcd99yyyzzz85a6"}, slackDocNow, false},
		{"no secret configured", slackDocBody, slackDocTS, slackDocSig, Config{}, slackDocNow, false},
		{"missing signature", slackDocBody, slackDocTS, "", cfg, slackDocNow, false},
		{"missing timestamp", slackDocBody, "", slackDocSig, cfg, slackDocNow, false},
		{"unversioned signature", slackDocBody, slackDocTS, slackDocSig[3:], cfg, slackDocNow, false},
		{"v1 signature", slackDocBody, slackDocTS, "v1=" + slackDocSig[3:], cfg, slackDocNow, false},
		{"not hex", slackDocBody, slackDocTS, "v0=zz", cfg, slackDocNow, false},
		{"truncated", slackDocBody, slackDocTS, slackDocSig[:40], cfg, slackDocNow, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := post(c.body, "Content-Type", "application/x-www-form-urlencoded")
			if c.ts != "" {
				r.Header.Set("X-Slack-Request-Timestamp", c.ts)
			}
			if c.sig != "" {
				r.Header.Set("X-Slack-Signature", c.sig)
			}
			err := Slack{}.Verify(r, []byte(c.body), c.cfg, c.now)
			if (err == nil) != c.valid {
				t.Fatalf("Verify = %v, want valid=%v", err, c.valid)
			}
			if err != nil && !errors.Is(err, ErrVerify) {
				t.Fatalf("error %v does not wrap ErrVerify", err)
			}
			errorsContainNoSecret(t, err, slackDocSecret)
		})
	}
	// The helper used below signs exactly like Slack.
	if got := slackSign(slackDocSecret, slackDocTS, slackDocBody); got != slackDocSig {
		t.Fatalf("slackSign = %s", got)
	}
}

// slackCallback is an Events API event_callback around event.
func slackCallback(event map[string]any) map[string]any {
	return map[string]any{
		"token": "XXYYZZ", "team_id": "T0001", "api_app_id": "A0001", "type": "event_callback",
		"event_id": "Ev0PV52K21", "event_time": 1531420618, "event": event,
		"authorizations": []any{map[string]any{"enterprise_id": nil, "team_id": "T0001", "user_id": "UBOT", "is_bot": true}},
	}
}

func TestSlackParse(t *testing.T) {
	t.Parallel()
	msg := func(extra map[string]any) map[string]any {
		e := map[string]any{"type": "message", "channel": "C123", "user": "U42", "text": "hello agent", "ts": "1531420618.000200", "channel_type": "channel"}
		for k, v := range extra {
			e[k] = v
		}
		return e
	}
	type want struct {
		ignored    bool
		conv, user string
		text       string
		replyTo    map[string]string
	}
	cases := []struct {
		name string
		body any
		cfg  Config
		want want
	}{
		{"channel message starts a thread", slackCallback(msg(nil)), nil,
			want{conv: "T0001:C123:1531420618.000200", user: "U42", text: "hello agent", replyTo: map[string]string{"channel": "C123", "thread_ts": "1531420618.000200"}}},
		{"reply in a thread continues it", slackCallback(msg(map[string]any{"ts": "1531420700.000300", "thread_ts": "1531420618.000200"})), nil,
			want{conv: "T0001:C123:1531420618.000200", user: "U42", text: "hello agent", replyTo: map[string]string{"channel": "C123", "thread_ts": "1531420618.000200"}}},
		{"app_mention", slackCallback(msg(map[string]any{"type": "app_mention", "text": "<@UBOT> hi"})), nil,
			want{conv: "T0001:C123:1531420618.000200", user: "U42", text: "hi", replyTo: map[string]string{"channel": "C123", "thread_ts": "1531420618.000200"}}},
		{"direct message keeps one conversation", slackCallback(msg(map[string]any{"channel": "D777", "channel_type": "im"})), nil,
			want{conv: "T0001:D777", user: "U42", text: "hello agent", replyTo: map[string]string{"channel": "D777", "thread_ts": ""}}},
		{"thread_broadcast", slackCallback(msg(map[string]any{"subtype": "thread_broadcast", "thread_ts": "1.1"})), nil,
			want{conv: "T0001:C123:1.1", user: "U42", text: "hello agent", replyTo: map[string]string{"channel": "C123", "thread_ts": "1.1"}}},
		{"bot_id", slackCallback(msg(map[string]any{"bot_id": "B01"})), nil, want{ignored: true}},
		{"bot_message subtype", slackCallback(msg(map[string]any{"subtype": "bot_message", "user": nil})), nil, want{ignored: true}},
		{"the bot's own user (authorizations)", slackCallback(msg(map[string]any{"user": "UBOT"})), nil, want{ignored: true}},
		{"the bot's own user (config)", slackCallback(msg(map[string]any{"user": "UMINE"})), Config{"bot_user_id": "UMINE"}, want{ignored: true}},
		{"message_changed", slackCallback(msg(map[string]any{"subtype": "message_changed"})), nil, want{ignored: true}},
		{"channel_join", slackCallback(msg(map[string]any{"subtype": "channel_join"})), nil, want{ignored: true}},
		{"reaction_added", slackCallback(map[string]any{"type": "reaction_added", "user": "U42", "reaction": "thumbsup"}), nil, want{ignored: true}},
		{"app_rate_limited", map[string]any{"type": "app_rate_limited", "team_id": "T0001", "minute_rate_limited": 1518467820}, nil, want{ignored: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			body := mustJSON(t, c.body)
			ev, err := Slack{}.Parse(post(body), []byte(body), c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if c.want.ignored {
				if ev.Respond == nil || ev.Respond.Status != http.StatusOK {
					t.Fatalf("want ignored with 200, got %+v", ev)
				}
				return
			}
			if ev.Respond != nil {
				t.Fatalf("unexpected Respond %s", ev.Respond.Body)
			}
			if ev.DedupKey != "Ev0PV52K21" || ev.ConversationKey != c.want.conv || ev.User != c.want.user || ev.Text != c.want.text {
				t.Fatalf("event = %+v", ev)
			}
			for k, v := range c.want.replyTo {
				if ev.ReplyTo[k] != v {
					t.Errorf("ReplyTo[%s] = %q, want %q", k, ev.ReplyTo[k], v)
				}
			}
			if ev.Payload["event_id"] != "Ev0PV52K21" {
				t.Errorf("payload = %v", ev.Payload)
			}
		})
	}
}

func TestSlackURLVerification(t *testing.T) {
	t.Parallel()
	// The handshake Slack sends when the Request URL is saved (Events API docs).
	body := `{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`
	ev, err := Slack{}.Parse(post(body), []byte(body), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if ev.Respond == nil || ev.Respond.Status != 200 || string(ev.Respond.Body) != "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" {
		t.Fatalf("Respond = %+v", ev.Respond)
	}
	for _, bad := range []string{`{"type":"url_verification"}`, `not json`, `{"type":"event_callback"}`, mustJSON(t, slackCallback(map[string]any{"type": "message", "user": "U1", "text": "x"}))} {
		if _, err := (Slack{}).Parse(post(bad), []byte(bad), Config{}); !errors.Is(err, ErrParse) {
			t.Errorf("Parse(%s) = %v, want ErrParse", bad, err)
		}
	}
}

func TestSlackReply(t *testing.T) {
	t.Parallel()
	api := newFakeAPI(t, func(int) (int, string) {
		return 200, `{"ok":true,"channel":"C123","ts":"1531420700.000400","message":{"text":"the answer","type":"message"}}`
	})
	ev := &Event{ReplyTo: map[string]string{"channel": "C123", "thread_ts": "1531420618.000200"}}
	resp, err := Slack{}.Reply(t.Context(), api.Client(), Credential{Token: "xoxb-test-token", BaseURL: api.URL + "/"}, ev, "the answer")
	if err != nil || resp != nil {
		t.Fatalf("Reply = %v, %v", resp, err)
	}
	reqs := api.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	got := reqs[0]
	if got.Method != "POST" || got.Path != "/api/chat.postMessage" || got.Auth != "Bearer xoxb-test-token" || got.ContentType != "application/json; charset=utf-8" {
		t.Fatalf("request = %+v", got)
	}
	if got.Body["channel"] != "C123" || got.Body["thread_ts"] != "1531420618.000200" || got.Body["text"] != "the answer" || len(got.Body) != 3 {
		t.Fatalf("body = %v", got.Body)
	}

	// In a DM outside a thread the answer is posted without thread_ts.
	dm := &Event{ReplyTo: map[string]string{"channel": "D777", "thread_ts": ""}}
	if _, err := (Slack{}).Reply(t.Context(), api.Client(), Credential{Token: "xoxb-test-token", BaseURL: api.URL}, dm, "hi"); err != nil {
		t.Fatal(err)
	}
	if b := api.requests()[1].Body; b["channel"] != "D777" || b["thread_ts"] != nil {
		t.Fatalf("DM body = %v", b)
	}
}

func TestSlackReplyErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		status int
		answer string
		code   string
	}{
		{"ok false", 200, `{"ok":false,"error":"channel_not_found"}`, "channel_not_found"},
		{"invalid token", 200, `{"ok":false,"error":"invalid_auth"}`, "invalid_auth"},
		{"rate limited", 429, `{"ok":false,"error":"ratelimited"}`, "ratelimited"},
		{"server error", 500, `{}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			api := newFakeAPI(t, func(int) (int, string) { return c.status, c.answer })
			ev := &Event{ReplyTo: map[string]string{"channel": "C1", "thread_ts": "1.2"}}
			_, err := Slack{}.Reply(t.Context(), api.Client(), Credential{Token: "xoxb-secret", BaseURL: api.URL}, ev, "x")
			var ae *APIError
			if !errors.As(err, &ae) || ae.Platform != "slack" || ae.Status != c.status || ae.Code != c.code {
				t.Fatalf("err = %#v", err)
			}
			errorsContainNoSecret(t, err, "xoxb-secret")
		})
	}
	if _, err := (Slack{}).Reply(t.Context(), nil, Credential{}, &Event{}, " \n"); !errors.Is(err, ErrEmptyReply) {
		t.Fatalf("empty reply: %v", err)
	}
}

func TestReplyRetryAfter(t *testing.T) {
	t.Parallel()
	slack := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"ok":false,"error":"ratelimited"}`)
	}))
	defer slack.Close()
	_, err := Slack{}.Reply(t.Context(), slack.Client(), Credential{Token: "xoxb-1", BaseURL: slack.URL}, &Event{ReplyTo: map[string]string{"channel": "C1"}}, "x")
	var ae *APIError
	if !errors.As(err, &ae) || ae.RetryAfter != 30*time.Second || ae.Code != "ratelimited" {
		t.Fatalf("slack err = %#v", err)
	}

	tg := newFakeAPI(t, func(int) (int, string) {
		return 429, `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 7","parameters":{"retry_after":7}}`
	})
	_, err = Telegram{}.Reply(t.Context(), tg.Client(), Credential{Token: "1:x", BaseURL: tg.URL}, &Event{ReplyTo: map[string]string{"chat_id": "1"}}, "x")
	if !errors.As(err, &ae) || ae.RetryAfter != 7*time.Second || ae.Code != "429" {
		t.Fatalf("telegram err = %#v", err)
	}
}
