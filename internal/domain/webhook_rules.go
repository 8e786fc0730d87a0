package domain

import (
	"encoding/base64"
	"net/url"
	"strings"
	"unicode/utf8"
)

// WebhookSecretPrefix starts every Standard Webhooks signing secret.
const WebhookSecretPrefix = "whsec_"

// WebhookURLMaxLen bounds a completion webhook URL, in characters: an agent's and a trigger's
// alike (the document's maxLength of every webhook_url field).
const WebhookURLMaxLen = 2000

// CheckWebhookURL is the one rule of every completion webhook URL (an agent's and a trigger's):
// absolute http or https with a host, no fragment and no credentials. Where it may connect is
// decided when it does (serve --deny-private-egress), not here.
func CheckWebhookURL(field, raw string) error {
	if utf8.RuneCountInString(raw) > WebhookURLMaxLen {
		return Invalid(field, "must be at most %d characters", WebhookURLMaxLen)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return Invalid(field, "must be an absolute http:// or https:// URL")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return Invalid(field, "must not have a fragment (#…)")
	}
	if u.User != nil {
		return Invalid(field, "must not hold credentials (user:password@); the signature authenticates the sender")
	}
	return nil
}

// CheckWebhookSecret accepts a Standard Webhooks secret: "whsec_" and the standard base64 of a
// key of 24 to 64 bytes. The message says what is wrong without repeating the value.
func CheckWebhookSecret(field, s string) error {
	rest, ok := strings.CutPrefix(s, WebhookSecretPrefix)
	if !ok {
		return Invalid(field, "must start with %q", WebhookSecretPrefix)
	}
	k, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return Invalid(field, "must be %q followed by standard base64", WebhookSecretPrefix)
	}
	if len(k) < 24 || len(k) > 64 {
		return Invalid(field, "must encode a key of 24 to 64 bytes, got %d", len(k))
	}
	return nil
}

// CompletionWebhook is what a request asks of an agent's or a trigger's completion webhook:
// a nil field was not given; an empty URL removes the webhook, an empty Secret asks for none
// (one is generated when a URL comes without it). New says the agent or trigger is being
// created, so it has no URL a secret could sign for unless the request gives one.
type CompletionWebhook struct {
	URL, Secret *string
	New         bool
}

// Validate holds the rules of a completion webhook change: the URL and the secret by their
// own rules, and no secret without a URL to sign for.
func (w CompletionWebhook) Validate() error {
	if w.URL != nil && *w.URL != "" {
		if err := CheckWebhookURL("webhook_url", *w.URL); err != nil {
			return err
		}
	}
	if w.Secret == nil || *w.Secret == "" {
		return nil
	}
	if w.URL != nil && *w.URL == "" {
		return Invalid("webhook_secret", "cannot be set while webhook_url is removed")
	}
	if err := CheckWebhookSecret("webhook_secret", *w.Secret); err != nil {
		return err
	}
	if w.New && w.URL == nil {
		return Invalid("webhook_secret", "needs a webhook_url")
	}
	return nil
}
