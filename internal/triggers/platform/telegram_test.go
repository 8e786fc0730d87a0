package platform

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestTelegramVerify(t *testing.T) {
	t.Parallel()
	cfg := Config{"secret_token": "s3cr3t_Token-1"}
	cases := []struct {
		name   string
		header string
		cfg    Config
		valid  bool
	}{
		{"matching", "s3cr3t_Token-1", cfg, true},
		{"wrong", "s3cr3t_Token-2", cfg, false},
		{"prefix only", "s3cr3t", cfg, false},
		{"missing", "", cfg, false},
		{"no secret configured", "", Config{}, false},
		{"no secret configured, header sent", "x", Config{}, false},
	}
	for _, c := range cases {
		r := post(`{"update_id":1}`)
		if c.header != "" {
			r.Header.Set("X-Telegram-Bot-Api-Secret-Token", c.header)
		}
		err := Telegram{}.Verify(r, []byte(`{"update_id":1}`), c.cfg, time.Now())
		if (err == nil) != c.valid {
			t.Errorf("%s: Verify = %v, want valid=%v", c.name, err, c.valid)
		}
		if err != nil && !errors.Is(err, ErrVerify) {
			t.Errorf("%s: %v does not wrap ErrVerify", c.name, err)
		}
		errorsContainNoSecret(t, err, "s3cr3t_Token-1")
	}
}

func TestTelegramParse(t *testing.T) {
	t.Parallel()
	// An Update as the Bot API sends it for a private text message.
	body := `{"update_id":10000,"message":{"message_id":1365,"from":{"id":1111111,"is_bot":false,"first_name":"Test","last_name":"User","username":"test","language_code":"en"},"chat":{"id":-1001234567890,"title":"Group","type":"supergroup"},"date":1441645532,"text":"/start hello"}}`
	ev, err := Telegram{}.Parse(post(body), []byte(body), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if ev.Respond != nil || ev.DedupKey != "10000" || ev.ConversationKey != "-1001234567890" || ev.User != "1111111" || ev.Text != "/start hello" {
		t.Fatalf("event = %+v", ev)
	}
	if ev.ReplyTo["chat_id"] != "-1001234567890" || ev.ReplyTo["message_thread_id"] != "" {
		t.Fatalf("ReplyTo = %v", ev.ReplyTo)
	}
	if ev.Payload["update_id"] != float64(10000) {
		t.Fatalf("payload = %v", ev.Payload)
	}

	// A forum topic keeps its own conversation and the answer goes to the topic.
	topic := `{"update_id":10001,"message":{"message_id":7,"message_thread_id":42,"is_topic_message":true,"from":{"id":5,"is_bot":false,"first_name":"A"},"chat":{"id":-100999,"type":"supergroup","is_forum":true},"date":1,"text":"in a topic"}}`
	ev, err = Telegram{}.Parse(post(topic), []byte(topic), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if ev.ConversationKey != "-100999:42" || ev.ReplyTo["message_thread_id"] != "42" {
		t.Fatalf("topic event = %+v", ev)
	}

	for name, ign := range map[string]string{
		"edited message": `{"update_id":2,"edited_message":{"message_id":1,"from":{"id":1,"is_bot":false},"chat":{"id":1},"date":1,"edit_date":2,"text":"x"}}`,
		"sticker":        `{"update_id":3,"message":{"message_id":1,"from":{"id":1,"is_bot":false},"chat":{"id":1},"date":1,"sticker":{"file_id":"f"}}}`,
		"from a bot":     `{"update_id":4,"message":{"message_id":1,"from":{"id":9,"is_bot":true},"chat":{"id":1},"date":1,"text":"beep"}}`,
		"channel post":   `{"update_id":5,"channel_post":{"message_id":1,"chat":{"id":-1},"date":1,"text":"news"}}`,
		"callback query": `{"update_id":6,"callback_query":{"id":"1","from":{"id":1,"is_bot":false},"data":"x"}}`,
	} {
		ev, err := Telegram{}.Parse(post(ign), []byte(ign), Config{})
		if err != nil || ev.Respond == nil || ev.Respond.Status != http.StatusOK {
			t.Errorf("%s: want ignored, got %+v, %v", name, ev, err)
		}
	}
	for _, bad := range []string{`{"message":{"text":"x"}}`, `[]`, `nope`} {
		if _, err := (Telegram{}).Parse(post(bad), []byte(bad), Config{}); !errors.Is(err, ErrParse) {
			t.Errorf("Parse(%s) = %v, want ErrParse", bad, err)
		}
	}
}

func TestTelegramReply(t *testing.T) {
	t.Parallel()
	api := newFakeAPI(t, func(int) (int, string) {
		return 200, `{"ok":true,"result":{"message_id":1366,"from":{"id":777,"is_bot":true,"first_name":"agent"},"chat":{"id":-1001234567890,"type":"supergroup"},"date":1441645600,"text":"x"}}`
	})
	cred := Credential{Token: "123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11", BaseURL: api.URL}
	ev := &Event{ReplyTo: map[string]string{"chat_id": "-1001234567890"}}
	if _, err := (Telegram{}).Reply(t.Context(), api.Client(), cred, ev, "the answer"); err != nil {
		t.Fatal(err)
	}
	got := api.requests()[0]
	if got.Method != "POST" || got.Path != "/bot123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11/sendMessage" || got.Auth != "" || !strings.HasPrefix(got.ContentType, "application/json") {
		t.Fatalf("request = %+v", got)
	}
	if got.Body["chat_id"] != float64(-1001234567890) || got.Body["text"] != "the answer" || len(got.Body) != 2 {
		t.Fatalf("body = %v", got.Body)
	}

	// A topic reply carries message_thread_id; a long answer is sent as several messages.
	ev = &Event{ReplyTo: map[string]string{"chat_id": "-100999", "message_thread_id": "42"}}
	long := strings.Repeat("line of the answer\n", 300) // 5700 characters
	if _, err := (Telegram{}).Reply(t.Context(), api.Client(), cred, ev, long); err != nil {
		t.Fatal(err)
	}
	reqs := api.requests()[1:]
	if len(reqs) != 2 {
		t.Fatalf("long answer sent in %d messages", len(reqs))
	}
	var joined string
	for _, r := range reqs {
		if r.Body["message_thread_id"] != float64(42) || len([]rune(r.Body["text"].(string))) > 4096 {
			t.Fatalf("part body = %v", r.Body)
		}
		joined += r.Body["text"].(string)
	}
	if joined != long {
		t.Fatal("parts do not add up to the answer")
	}
}

func TestTelegramReplyErrors(t *testing.T) {
	t.Parallel()
	const token = "123456:SECRET-token"
	api := newFakeAPI(t, func(int) (int, string) {
		return 400, `{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}`
	})
	ev := &Event{ReplyTo: map[string]string{"chat_id": "1"}}
	_, err := Telegram{}.Reply(t.Context(), api.Client(), Credential{Token: token, BaseURL: api.URL}, ev, "x")
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Code != "400" || ae.Message != "Bad Request: chat not found" || ae.Platform != "telegram" {
		t.Fatalf("err = %#v", err)
	}
	errorsContainNoSecret(t, err, token)

	// A transport error names the URL without the bot token.
	dead := newFakeAPI(t, func(int) (int, string) { return 200, `{}` })
	dead.Close()
	_, err = Telegram{}.Reply(t.Context(), dead.Client(), Credential{Token: token, BaseURL: dead.URL}, ev, "x")
	if err == nil || !strings.Contains(err.Error(), "/bot<token>/sendMessage") {
		t.Fatalf("transport err = %v", err)
	}
	errorsContainNoSecret(t, err, token, "SECRET")
}
