package platform

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A text-message notification in the shape of Meta's webhook reference, and its X-Hub-Signature-256
// computed independently (openssl dgst -sha256 -hmac) with waSecret.
const (
	waSecret = "f1e2d3c4b5a697887766554433221100"
	waBody   = `{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":"106540352242922"},"contacts":[{"profile":{"name":"Sheena Nelson"},"wa_id":"16505551234"}],"messages":[{"from":"16505551234","id":"wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=","timestamp":"1749416383","text":{"body":"Does it come in another color?"},"type":"text"}]},"field":"messages"}]}]}`
	waSig    = "sha256=9d55f003ae95937e93991363de6c893bc7981de074cd704c10eb16a10069a428"
)

var waCfg = Config{"verify_token": "meatyhamhock", "app_secret": waSecret, "phone_number_id": "106540352242922"}

func TestWhatsAppHandshake(t *testing.T) {
	t.Parallel()
	get := func(query string) *http.Request {
		return httptest.NewRequest(http.MethodGet, "/api/v1/hooks/tok?"+query, nil)
	}
	r := get("hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=meatyhamhock")
	if err := (WhatsApp{}).Verify(r, nil, waCfg, time.Now()); err != nil {
		t.Fatal(err)
	}
	ev, err := WhatsApp{}.Parse(r, nil, waCfg)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Respond == nil || ev.Respond.Status != 200 || string(ev.Respond.Body) != "1158201444" || !strings.HasPrefix(ev.Respond.ContentType, "text/plain") {
		t.Fatalf("Respond = %+v", ev.Respond)
	}
	for name, q := range map[string]string{
		"wrong token":   "hub.mode=subscribe&hub.challenge=1&hub.verify_token=other",
		"missing token": "hub.mode=subscribe&hub.challenge=1",
		"wrong mode":    "hub.mode=unsubscribe&hub.challenge=1&hub.verify_token=meatyhamhock",
		"no query":      "",
	} {
		err := WhatsApp{}.Verify(get(q), nil, waCfg, time.Now())
		if !errors.Is(err, ErrVerify) {
			t.Errorf("%s: Verify = %v, want ErrVerify", name, err)
		}
		errorsContainNoSecret(t, err, "meatyhamhock")
	}
	if err := (WhatsApp{}).Verify(get("hub.mode=subscribe&hub.challenge=1&hub.verify_token=x"), nil, Config{}, time.Now()); !errors.Is(err, ErrVerify) {
		t.Errorf("no verify_token configured: %v", err)
	}
	if _, err := (WhatsApp{}).Parse(get("hub.mode=subscribe&hub.verify_token=meatyhamhock"), nil, waCfg); !errors.Is(err, ErrParse) {
		t.Errorf("no challenge: %v", err)
	}
}

func TestWhatsAppVerify(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body, sig string
		cfg             Config
		valid           bool
	}{
		{"independently computed signature", waBody, waSig, waCfg, true},
		{"tampered body", strings.Replace(waBody, "color", "colour", 1), waSig, waCfg, false},
		{"wrong app secret", waBody, waSig, Config{"app_secret": "0000"}, false},
		{"no app secret configured", waBody, waSig, Config{}, false},
		{"missing header", waBody, "", waCfg, false},
		{"sha1 header", waBody, "sha1=" + waSig[7:], waCfg, false},
		{"not hex", waBody, "sha256=xyz", waCfg, false},
	}
	for _, c := range cases {
		r := post(c.body)
		if c.sig != "" {
			r.Header.Set("X-Hub-Signature-256", c.sig)
		}
		err := WhatsApp{}.Verify(r, []byte(c.body), c.cfg, time.Now())
		if (err == nil) != c.valid {
			t.Errorf("%s: Verify = %v, want valid=%v", c.name, err, c.valid)
		}
		if err != nil && !errors.Is(err, ErrVerify) {
			t.Errorf("%s: %v does not wrap ErrVerify", c.name, err)
		}
		errorsContainNoSecret(t, err, waSecret)
	}
}

func TestWhatsAppParse(t *testing.T) {
	t.Parallel()
	ev, err := WhatsApp{}.Parse(post(waBody), []byte(waBody), waCfg)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Respond != nil || ev.DedupKey != "wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=" ||
		ev.ConversationKey != "16505551234" || ev.User != "16505551234" || ev.Text != "Does it come in another color?" {
		t.Fatalf("event = %+v", ev)
	}
	if ev.ReplyTo["to"] != "16505551234" || ev.ReplyTo["phone_number_id"] != "106540352242922" {
		t.Fatalf("ReplyTo = %v", ev.ReplyTo)
	}
	if ev.Payload["object"] != "whatsapp_business_account" {
		t.Fatalf("payload = %v", ev.Payload)
	}

	// Without phone_number_id in config the answer comes from the number written to.
	ev, err = WhatsApp{}.Parse(post(waBody), []byte(waBody), Config{})
	if err != nil || ev.ReplyTo["phone_number_id"] != "106540352242922" {
		t.Fatalf("no config phone: %+v, %v", ev, err)
	}

	button := `{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{"messaging_product":"whatsapp","metadata":{"phone_number_id":"106540352242922"},"messages":[{"from":"4917","id":"wamid.B","timestamp":"1","type":"interactive","interactive":{"type":"button_reply","button_reply":{"id":"yes","title":"Yes please"}}}]}}]}]}`
	ev, err = WhatsApp{}.Parse(post(button), []byte(button), waCfg)
	if err != nil || ev.Text != "Yes please" || ev.DedupKey != "wamid.B" {
		t.Fatalf("interactive: %+v, %v", ev, err)
	}

	for name, ign := range map[string]string{
		"statuses only": `{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{"messaging_product":"whatsapp","metadata":{"phone_number_id":"106540352242922"},"statuses":[{"id":"wamid.X","status":"delivered","timestamp":"1","recipient_id":"16505551234"}]}}]}]}`,
		"image":         `{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{"metadata":{"phone_number_id":"106540352242922"},"messages":[{"from":"1","id":"wamid.I","type":"image","image":{"id":"m1","mime_type":"image/jpeg"}}]}}]}]}`,
		"other number":  strings.Replace(waBody, `"phone_number_id":"106540352242922"`, `"phone_number_id":"999"`, 1),
		"other field":   `{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"account_update","value":{"event":"VERIFIED_ACCOUNT"}}]}]}`,
	} {
		ev, err := WhatsApp{}.Parse(post(ign), []byte(ign), waCfg)
		if err != nil || ev.Respond == nil || ev.Respond.Status != 200 {
			t.Errorf("%s: want ignored, got %+v, %v", name, ev, err)
		}
	}
	if _, err := (WhatsApp{}).Parse(post("x"), []byte("x"), waCfg); !errors.Is(err, ErrParse) {
		t.Errorf("non-JSON: %v", err)
	}
}

func TestWhatsAppReply(t *testing.T) {
	t.Parallel()
	api := newFakeAPI(t, func(int) (int, string) {
		return 200, `{"messaging_product":"whatsapp","contacts":[{"input":"16505551234","wa_id":"16505551234"}],"messages":[{"id":"wamid.HBgLMTY0NjcwNDM1OTUVAgARGBI1RjQyNUE3NEYxMzAzMzQ5MkEA"}]}`
	})
	ev := &Event{ReplyTo: map[string]string{"to": "16505551234", "phone_number_id": "106540352242922"}}
	cred := Credential{Token: "EAAJB-access-token", BaseURL: api.URL}
	if _, err := (WhatsApp{}).Reply(t.Context(), api.Client(), cred, ev, "Yes, in blue."); err != nil {
		t.Fatal(err)
	}
	got := api.requests()[0]
	if got.Method != "POST" || got.Path != "/v21.0/106540352242922/messages" || got.Auth != "Bearer EAAJB-access-token" || !strings.HasPrefix(got.ContentType, "application/json") {
		t.Fatalf("request = %+v", got)
	}
	b := got.Body
	text, _ := b["text"].(map[string]any)
	if b["messaging_product"] != "whatsapp" || b["to"] != "16505551234" || b["type"] != "text" || text["body"] != "Yes, in blue." || b["recipient_type"] != "individual" {
		t.Fatalf("body = %v", b)
	}

	// A long answer goes out as several messages of at most 4096 characters.
	if _, err := (WhatsApp{}).Reply(t.Context(), api.Client(), cred, ev, strings.Repeat("ab ", 2000)); err != nil {
		t.Fatal(err)
	}
	if n := len(api.requests()); n != 3 {
		t.Fatalf("%d requests, want 1 + 2", n)
	}
}

func TestWhatsAppReplyErrors(t *testing.T) {
	t.Parallel()
	api := newFakeAPI(t, func(int) (int, string) {
		return 400, `{"error":{"message":"(#131030) Recipient phone number not in allowed list","type":"OAuthException","code":131030,"error_data":{"messaging_product":"whatsapp","details":"Recipient phone number not in allowed list"},"fbtrace_id":"Az8or2yhqkZfEZ-_4Qn_Bam"}}`
	})
	ev := &Event{ReplyTo: map[string]string{"to": "1", "phone_number_id": "106540352242922"}}
	_, err := WhatsApp{}.Reply(t.Context(), api.Client(), Credential{Token: "EAAJB-secret", BaseURL: api.URL}, ev, "x")
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Code != "131030" || !strings.Contains(ae.Message, "allowed list") || ae.Platform != "whatsapp" {
		t.Fatalf("err = %#v", err)
	}
	errorsContainNoSecret(t, err, "EAAJB-secret")

	if _, err := (WhatsApp{}).Reply(t.Context(), api.Client(), Credential{BaseURL: api.URL}, &Event{ReplyTo: map[string]string{"to": "1"}}, "x"); !errors.As(err, &ae) {
		t.Fatalf("no phone_number_id: %v", err)
	}
	if _, err := (WhatsApp{}).Reply(t.Context(), api.Client(), Credential{BaseURL: api.URL}, ev, ""); !errors.Is(err, ErrEmptyReply) {
		t.Fatalf("empty: %v", err)
	}
}
