// Package webhook delivers completion webhooks: when an execution ends, its agent's webhook
// (and, once triggers have them, its trigger's) receives the execution as a POST signed with
// the Standard Webhooks scheme (https://www.standardwebhooks.com). Messages go through a
// durable outbox, the webhook_deliveries table, written in the transaction that ends the
// execution; a Deliverer on every node claims due rows under a lease, sends them, and retries
// failures with exponential backoff for up to 24 hours.
package webhook

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// SecretPrefix starts every Standard Webhooks signing secret.
const SecretPrefix = "whsec_"

// secretBytes is the length of a generated secret's key.
const secretBytes = 32

// NewSecret returns a fresh signing secret: "whsec_" and the base64 of 32 random bytes.
func NewSecret() string {
	k := make([]byte, secretBytes)
	_, _ = rand.Read(k)
	return SecretPrefix + base64.StdEncoding.EncodeToString(k)
}

// CheckSecret accepts a Standard Webhooks secret: "whsec_" and the standard base64 of a key
// of 24 to 64 bytes. The error says what is wrong without repeating the value.
func CheckSecret(s string) error {
	rest, ok := strings.CutPrefix(s, SecretPrefix)
	if !ok {
		return fmt.Errorf("must start with %q", SecretPrefix)
	}
	k, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return fmt.Errorf("must be %q followed by standard base64", SecretPrefix)
	}
	if len(k) < 24 || len(k) > 64 {
		return fmt.Errorf("must encode a key of 24 to 64 bytes, got %d", len(k))
	}
	return nil
}

// MaxURLLen bounds a webhook URL, in characters: an agent's and a trigger's alike (the
// document's maxLength of both webhook_url fields).
const MaxURLLen = 2000

// CheckURL accepts an absolute http or https URL with a host, no fragment and no credentials:
// the one rule of every webhook URL (agents' completion webhooks and triggers'). Where it may
// connect is decided when it does (serve --deny-private-egress), not here.
func CheckURL(raw string) error {
	if utf8.RuneCountInString(raw) > MaxURLLen {
		return fmt.Errorf("must be at most %d characters", MaxURLLen)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return fmt.Errorf("must be an absolute http:// or https:// URL")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return fmt.Errorf("must not have a fragment (#…)")
	}
	if u.User != nil {
		return fmt.Errorf("must not hold credentials (user:password@); the signature authenticates the sender")
	}
	return nil
}
