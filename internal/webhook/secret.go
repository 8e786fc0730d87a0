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

	"github.com/agentplane/agentplane/internal/domain"
)

// SecretPrefix starts every Standard Webhooks signing secret. The rules of secrets and
// webhook URLs are domain's (CheckWebhookSecret, CheckWebhookURL).
const SecretPrefix = domain.WebhookSecretPrefix

// secretBytes is the length of a generated secret's key.
const secretBytes = 32

// NewSecret returns a fresh signing secret: "whsec_" and the base64 of 32 random bytes.
func NewSecret() string {
	k := make([]byte, secretBytes)
	_, _ = rand.Read(k)
	return SecretPrefix + base64.StdEncoding.EncodeToString(k)
}
