package platform

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Webhook is the generic webhook: any JSON POST, checked with the Standard Webhooks scheme
// (https://www.standardwebhooks.com) when the trigger has a signing_secret.
//
// With a secret, a call must carry webhook-id, webhook-timestamp (Unix seconds, within Tolerance)
// and webhook-signature: space-separated "v1,<base64 HMAC-SHA256 of id.timestamp.body>" entries,
// one of which must match (several allow secret rotation). The secret is "whsec_" followed by the
// base64 key.
type Webhook struct{}

var _ Platform = Webhook{}

// TypeWebhook is the trigger type of the generic webhook.
const TypeWebhook = "webhook"

func init() {
	Register(Spec{
		Type: TypeWebhook,
		Doc:  "webhook: signing_secret (a Standard Webhooks whsec_… secret, optional), respond (async, the default, or sync).",
		Fields: []Field{
			{Name: "signing_secret", Kind: KindSecret, Check: checkWhsec},
			{Name: "respond", Kind: KindEnum, Enum: []string{"async", "sync"}, Default: "async"},
		},
		Platform: Webhook{},
	})
}

// checkWhsec accepts a Standard Webhooks secret: whsec_ and the base64 of 16 to 64 bytes.
func checkWhsec(v string) error {
	rest, ok := strings.CutPrefix(v, "whsec_")
	if !ok {
		return errors.New("must be a Standard Webhooks secret: whsec_ followed by base64")
	}
	if b, err := base64.StdEncoding.DecodeString(rest); err != nil || len(b) < 16 || len(b) > 64 {
		return errors.New("must be whsec_ followed by the base64 of 16 to 64 random bytes")
	}
	return nil
}

// decodeWebhookSecret returns the HMAC key of a whsec_ secret (the prefix is optional).
func decodeWebhookSecret(s string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
	if err != nil {
		return nil, errors.New(`must be "whsec_" followed by a base64 key`)
	}
	if len(key) == 0 {
		return nil, errors.New("key is empty")
	}
	return key, nil
}

// Verify checks the Standard Webhooks signature; without a signing_secret every call passes.
func (Webhook) Verify(r *http.Request, body []byte, cfg Config, now time.Time) error {
	secret := cfg.str("signing_secret")
	if secret == "" {
		return nil
	}
	key, err := decodeWebhookSecret(secret)
	if err != nil {
		return verifyErr("trigger signing_secret: %v", err)
	}
	h := r.Header
	if h.Get(standardwebhooks.HeaderWebhookID) == "" || h.Get(standardwebhooks.HeaderWebhookSignature) == "" {
		return verifyErr("missing webhook-id or webhook-signature header")
	}
	// The library checks the timestamp against the wall clock; ours is checked against now.
	if err := checkTimestamp(h.Get(standardwebhooks.HeaderWebhookTimestamp), now); err != nil {
		return err
	}
	wh, err := standardwebhooks.NewWebhookRaw(key)
	if err != nil {
		return verifyErr("trigger signing_secret: %v", err)
	}
	if err := wh.VerifyIgnoringTimestamp(body, h); err != nil {
		return verifyErr("no matching webhook-signature")
	}
	return nil
}

// Parse accepts a JSON object (or an empty body, as {}); the webhook-id header, or else an
// Idempotency-Key header, becomes the DedupKey.
func (Webhook) Parse(r *http.Request, body []byte, cfg Config) (*Event, error) {
	payload := map[string]any{}
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &payload); err != nil || payload == nil {
			return nil, parseErr("body must be a JSON object")
		}
	}
	key := r.Header.Get(standardwebhooks.HeaderWebhookID)
	if key == "" {
		key = r.Header.Get("Idempotency-Key")
	}
	return &Event{DedupKey: key, Payload: payload}, nil
}

// Reply is not supported: a generic webhook's caller gets the execution (async or sync), not a
// chat message. It returns nil, nil so a caller may call it uniformly.
func (Webhook) Reply(ctx context.Context, hc *http.Client, cred Credential, ev *Event, text string) (*Response, error) {
	return nil, nil
}

// Sync reports false: the hook endpoint decides between 202 and the finished execution from
// config.respond, not from the platform.
func (Webhook) Sync() bool { return false }
