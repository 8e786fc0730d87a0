package platform

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// The Standard Webhooks test vector (the reference libraries' TestWebhookSign / validSigned).
const (
	swSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	swID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	swTS     = "1614265330"
	swBody   = `{"test": 2432232314}`
	swSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

var swNow = time.Unix(1614265330, 0)

func TestWebhookVerify(t *testing.T) {
	t.Parallel()
	cfg := Config{"signing_secret": swSecret}
	cases := []struct {
		name  string
		body  string
		id    string
		ts    string
		sig   string
		cfg   Config
		now   time.Time
		valid bool
	}{
		{"published vector", swBody, swID, swTS, swSig, cfg, swNow, true},
		{"secret without prefix", swBody, swID, swTS, swSig, Config{"signing_secret": "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, swNow, true},
		{"several signatures, one matching", swBody, swID, swTS, "v1,Zm9vYmFy " + swSig, cfg, swNow, true},
		{"4 minutes later", swBody, swID, swTS, swSig, cfg, swNow.Add(4 * time.Minute), true},
		{"tampered body", `{"test": 2432232315}`, swID, swTS, swSig, cfg, swNow, false},
		{"other id", swBody, "msg_other", swTS, swSig, cfg, swNow, false},
		{"signed timestamp changed", swBody, swID, "1614265331", swSig, cfg, swNow, false},
		{"wrong secret", swBody, swID, swTS, swSig, Config{"signing_secret": "whsec_" + "c2VjcmV0c2VjcmV0c2VjcmV0"}, swNow, false},
		{"wrong version", swBody, swID, swTS, "v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", cfg, swNow, false},
		{"stale: 6 minutes later", swBody, swID, swTS, swSig, cfg, swNow.Add(6 * time.Minute), false},
		{"from the future", swBody, swID, swTS, swSig, cfg, swNow.Add(-6 * time.Minute), false},
		{"missing id", swBody, "", swTS, swSig, cfg, swNow, false},
		{"missing timestamp", swBody, swID, "", swSig, cfg, swNow, false},
		{"missing signature", swBody, swID, swTS, "", cfg, swNow, false},
		{"bad timestamp", swBody, swID, "yesterday", swSig, cfg, swNow, false},
		{"no secret: no check", swBody, "", "", "", Config{}, swNow, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := post(c.body)
			for k, v := range map[string]string{"webhook-id": c.id, "webhook-timestamp": c.ts, "webhook-signature": c.sig} {
				if v != "" {
					r.Header.Set(k, v)
				}
			}
			err := Webhook{}.Verify(r, []byte(c.body), c.cfg, c.now)
			if (err == nil) != c.valid {
				t.Fatalf("Verify = %v, want valid=%v", err, c.valid)
			}
			if err != nil && !errors.Is(err, ErrVerify) {
				t.Fatalf("error %v does not wrap ErrVerify", err)
			}
			errorsContainNoSecret(t, err, "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
		})
	}
}

// TestWebhookVerifyLibrarySigned checks calls signed by the reference library at the current
// time, the way a real sender (Svix, another agentplane) signs them.
func TestWebhookVerifyLibrarySigned(t *testing.T) {
	t.Parallel()
	wh, err := standardwebhooks.NewWebhook(swSecret)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	body := []byte(`{"type":"invoice.paid","data":{"id":"in_1"}}`)
	sig, err := wh.Sign("msg_1", now, body)
	if err != nil {
		t.Fatal(err)
	}
	r := post(string(body), "webhook-id", "msg_1", "webhook-timestamp", fmt.Sprint(now.Unix()), "webhook-signature", sig)
	if err := (Webhook{}).Verify(r, body, Config{"signing_secret": swSecret}, now); err != nil {
		t.Fatalf("Verify = %v", err)
	}
}

func TestWebhookParse(t *testing.T) {
	t.Parallel()
	r := post(`{"order":{"id":7},"note":"hi"}`, "webhook-id", "msg_9", "Idempotency-Key", "idem")
	ev, err := Webhook{}.Parse(r, []byte(`{"order":{"id":7},"note":"hi"}`), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if ev.Respond != nil || ev.DedupKey != "msg_9" || ev.Text != "" || ev.Payload["note"] != "hi" {
		t.Fatalf("event = %+v", ev)
	}
	if id := ev.Payload["order"].(map[string]any)["id"]; id != float64(7) {
		t.Fatalf("payload order.id = %v", id)
	}

	r = post(`{}`, "Idempotency-Key", "idem-1")
	ev, err = Webhook{}.Parse(r, []byte(`{}`), Config{})
	if err != nil || ev.DedupKey != "idem-1" {
		t.Fatalf("Idempotency-Key fallback: %+v, %v", ev, err)
	}

	ev, err = Webhook{}.Parse(post(""), nil, Config{})
	if err != nil || ev.DedupKey != "" || ev.Payload == nil || len(ev.Payload) != 0 {
		t.Fatalf("empty body: %+v, %v", ev, err)
	}

	for _, bad := range []string{`[1,2]`, `"text"`, `null`, `{"a":1} {"b":2}`, `{"a":`, `<xml/>`} {
		if _, err := (Webhook{}).Parse(post(bad), []byte(bad), Config{}); !errors.Is(err, ErrParse) {
			t.Errorf("Parse(%s) = %v, want ErrParse", bad, err)
		}
	}

	resp, err := Webhook{}.Reply(t.Context(), http.DefaultClient, Credential{}, ev, "x")
	if resp != nil || err != nil {
		t.Fatalf("Reply = %v, %v", resp, err)
	}
}
