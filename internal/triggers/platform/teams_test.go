package platform

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// An outgoing-webhook activity in the shape of the Teams docs, signed with the sample key of
// Microsoft's outgoing-webhook sample (the "contoso" key); teamsAuth was computed independently
// (openssl dgst -sha256 -mac HMAC | base64).
const (
	teamsSecret = "vqF0En+Z0ucuRTM/01o2GuhMH3hKKk/N2bOmlM31zaA="
	teamsBody   = `{"type":"message","id":"1485983408511","timestamp":"2017-02-01T21:10:07.437Z","serviceUrl":"https://smba.trafficmanager.net/amer/","channelId":"msteams","from":{"id":"29:1XJKJMvc5GBtc2JwZq0oj8tHZmzrQgFmB25ATiQWA85gQtHieVkKilBZ9XHoq9j7Zaqt7CZ-NJWi7me2kHTL3Bw","name":"Tom Smith","aadObjectId":"c33aafc4-646a-4b31-9e9f-6d1f3b7e4e5f"},"conversation":{"isGroup":true,"id":"19:253b1f341670408fb6fe51050b6e5ceb@thread.skype;messageid=1485983408511","conversationType":"channel"},"recipient":null,"textFormat":"plain","attachmentLayout":null,"text":"<at>Agent</at> what is the weather&nbsp;today?\n","entities":[{"type":"mention","mentioned":{"id":"28:c9e8c047-2a74-40a2-b28a-b162d5f5327c","name":"Agent"},"text":"<at>Agent</at>"}]}`
	teamsAuth   = "HMAC Wjxd0RjU8fD6y8Br0X2pnMKAjEdGnhBrTMDNSFfkxvo="
)

func TestTeamsVerify(t *testing.T) {
	t.Parallel()
	cfg := Config{"hmac_secret": teamsSecret}
	cases := []struct {
		name, body, auth string
		cfg              Config
		valid            bool
	}{
		{"independently computed HMAC", teamsBody, teamsAuth, cfg, true},
		{"tampered body", strings.Replace(teamsBody, "weather", "whether", 1), teamsAuth, cfg, false},
		{"wrong secret", teamsBody, teamsAuth, Config{"hmac_secret": "QgyNSToQjf4p6+YzDpjKks1/tXeJQ7FhVHqRwTnugVI="}, false},
		{"secret used as raw bytes instead of base64-decoded", teamsBody, teamsAuth, Config{"hmac_secret": "bm90IHRoZSBrZXk="}, false},
		{"no secret configured", teamsBody, teamsAuth, Config{}, false},
		{"missing header", teamsBody, "", cfg, false},
		{"bearer instead of HMAC", teamsBody, "Bearer " + teamsAuth[5:], cfg, false},
		{"not base64", teamsBody, "HMAC !!!", cfg, false},
	}
	for _, c := range cases {
		r := post(c.body)
		if c.auth != "" {
			r.Header.Set("Authorization", c.auth)
		}
		err := Teams{}.Verify(r, []byte(c.body), c.cfg, time.Now())
		if (err == nil) != c.valid {
			t.Errorf("%s: Verify = %v, want valid=%v", c.name, err, c.valid)
		}
		if err != nil && !errors.Is(err, ErrVerify) {
			t.Errorf("%s: %v does not wrap ErrVerify", c.name, err)
		}
		errorsContainNoSecret(t, err, teamsSecret)
	}
}

func TestTeamsParseAndReply(t *testing.T) {
	t.Parallel()
	ev, err := Teams{}.Parse(post(teamsBody), []byte(teamsBody), Config{"hmac_secret": teamsSecret})
	if err != nil {
		t.Fatal(err)
	}
	if ev.Respond != nil || ev.Text != "what is the weather today?" || ev.DedupKey != "1485983408511" ||
		ev.ConversationKey != "19:253b1f341670408fb6fe51050b6e5ceb@thread.skype;messageid=1485983408511" ||
		ev.User != "c33aafc4-646a-4b31-9e9f-6d1f3b7e4e5f" || ev.Payload["channelId"] != "msteams" {
		t.Fatalf("event = %+v", ev)
	}

	resp, err := Teams{}.Reply(t.Context(), nil, Credential{}, ev, "Sunny, 21 °C.")
	if err != nil || resp == nil {
		t.Fatalf("Reply = %v, %v", resp, err)
	}
	var msg map[string]any
	if err := json.Unmarshal(resp.Body, &msg); err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 || resp.ContentType != "application/json" || msg["type"] != "message" || msg["text"] != "Sunny, 21 °C." || len(msg) != 2 {
		t.Fatalf("response = %d %s %s", resp.Status, resp.ContentType, resp.Body)
	}

	if _, err := (Teams{}).Parse(post(`{"type":"message","text":"x"}`), []byte(`{"type":"message","text":"x"}`), nil); !errors.Is(err, ErrParse) {
		t.Errorf("no conversation: %v", err)
	}
	if _, err := (Teams{}).Parse(post(`x`), []byte(`x`), nil); !errors.Is(err, ErrParse) {
		t.Errorf("non-JSON: %v", err)
	}
}

func TestTeamsText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"<at>Agent</at> hello":                          "hello",
		"<at>Agent</at>&nbsp;summarise &lt;this&gt;":    "summarise <this>",
		"<div><at>Agent Bot</at> two\nlines</div>":      "two\nlines",
		"ask <at>Agent</at> and <at>Ann Lee</at> both ": "ask and both",
		"no mention": "no mention",
	} {
		if got := teamsText(in); got != want {
			t.Errorf("teamsText(%q) = %q, want %q", in, got, want)
		}
	}
}
