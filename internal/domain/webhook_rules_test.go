package domain

import (
	"errors"
	"strings"
	"testing"
)

// secret24 is a valid Standard Webhooks secret (a key of 24 bytes).
const secret24 = "whsec_" + "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB"

// wantField checks err is a *FieldError naming field whose message holds msg ("" when err
// must be nil).
func wantField(t *testing.T, err error, field, msg string) {
	t.Helper()
	if field == "" {
		if err != nil {
			t.Fatalf("got %v, want nil", err)
		}
		return
	}
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != field || !strings.Contains(fe.Message, msg) {
		t.Fatalf("got %v, want %s: …%s…", err, field, msg)
	}
}

func TestCheckWebhookURL(t *testing.T) {
	for _, tc := range []struct{ name, url, msg string }{
		{"https", "https://example.com/hook", ""},
		{"http with port and query", "http://10.0.0.1:8080/x?y=1", ""},
		{"empty", "", "absolute"},
		{"no scheme", "example.com", "absolute"},
		{"ftp", "ftp://example.com", "absolute"},
		{"no host", "https://", "absolute"},
		{"credentials", "https://u:p@example.com/", "credentials"},
		{"fragment", "https://example.com/#frag", "fragment"},
		{"empty fragment", "https://example.com/#", "fragment"},
		{"too long", "https://example.com/" + strings.Repeat("a", WebhookURLMaxLen), "at most 2000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			field := "webhook_url"
			if tc.msg == "" {
				field = ""
			}
			wantField(t, CheckWebhookURL("webhook_url", tc.url), field, tc.msg)
		})
	}
}

func TestCheckWebhookSecret(t *testing.T) {
	for _, tc := range []struct{ name, secret, msg string }{
		{"24-byte key", secret24, ""},
		{"no prefix", "plaintext-key", "must start with"},
		{"not base64", "whsec_!!!", "standard base64"},
		{"key too short", "whsec_c2hvcnQ=", "24 to 64 bytes, got 5"},
		{"key too long", "whsec_" + strings.Repeat("QUFB", 30), "24 to 64 bytes, got 90"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			field := "webhook_secret"
			if tc.msg == "" {
				field = ""
			}
			err := CheckWebhookSecret("webhook_secret", tc.secret)
			wantField(t, err, field, tc.msg)
			if err != nil && strings.Contains(err.Error(), tc.secret) {
				t.Fatalf("the message repeats the secret: %v", err)
			}
		})
	}
}

func TestCompletionWebhookValidate(t *testing.T) {
	s := func(v string) *string { return &v }
	for _, tc := range []struct {
		name       string
		w          CompletionWebhook
		field, msg string
	}{
		{"nothing given", CompletionWebhook{}, "", ""},
		{"a URL alone", CompletionWebhook{URL: s("https://example.com/h"), New: true}, "", ""},
		{"a URL and a secret", CompletionWebhook{URL: s("https://example.com/h"), Secret: s(secret24), New: true}, "", ""},
		{"a removal", CompletionWebhook{URL: s("")}, "", ""},
		{"an empty secret asks for none", CompletionWebhook{URL: s("https://example.com/h"), Secret: s(""), New: true}, "", ""},
		{"a secret alone on a change", CompletionWebhook{Secret: s(secret24)}, "", ""},
		{"a bad URL", CompletionWebhook{URL: s("https://example.com/#x")}, "webhook_url", "fragment"},
		{"a bad secret", CompletionWebhook{URL: s("https://example.com/h"), Secret: s("nope")}, "webhook_secret", "must start with"},
		{"a secret beside a removal", CompletionWebhook{URL: s(""), Secret: s(secret24)}, "webhook_secret", "cannot be set while webhook_url is removed"},
		{"a secret alone on a new one", CompletionWebhook{Secret: s(secret24), New: true}, "webhook_secret", "needs a webhook_url"},
		{"a bad secret alone on a new one", CompletionWebhook{Secret: s("nope"), New: true}, "webhook_secret", "must start with"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantField(t, tc.w.Validate(), tc.field, tc.msg)
		})
	}
}
