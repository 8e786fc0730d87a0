package client

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// WebhookDelivery is one completion webhook message: an execution's end, sent to one receiver.
type WebhookDelivery struct {
	ID               string          `json:"id"`
	WorkspaceID      string          `json:"workspace_id"`
	ExecutionID      string          `json:"execution_id"`
	TargetType       string          `json:"target_type"`
	TargetID         string          `json:"target_id"`
	URL              string          `json:"url"`
	EventType        string          `json:"event_type"`
	Status           string          `json:"status"` // pending, delivered or failed
	Attempts         int             `json:"attempts"`
	NextAttemptAt    *time.Time      `json:"next_attempt_at"`
	LastAttemptAt    *time.Time      `json:"last_attempt_at"`
	LastResponseCode *int            `json:"last_response_code"`
	LastError        *string         `json:"last_error"`
	DeliveredAt      *time.Time      `json:"delivered_at"`
	ExpiresAt        time.Time       `json:"expires_at"` // no attempt is scheduled after it
	CreatedAt        time.Time       `json:"created_at"`
	UpdatedAt        time.Time       `json:"updated_at"`
	Payload          json.RawMessage `json:"payload,omitempty"` // only from WebhookDeliveryGet
}

// WebhookDeliveryListOptions filters WebhookDeliveryList.
type WebhookDeliveryListOptions struct {
	ListOptions
	ExecutionID, Status string
}

// WebhookDeliveryList lists completion webhook deliveries, newest first.
func (c *Client) WebhookDeliveryList(ctx context.Context, o WebhookDeliveryListOptions) (*List[WebhookDelivery], error) {
	q := o.values()
	setIf(q, "execution_id", o.ExecutionID)
	setIf(q, "status", o.Status)
	return list[WebhookDelivery](ctx, c, "/api/v1/webhook-deliveries", q)
}

// WebhookDeliveryGet gets one delivery with its payload.
func (c *Client) WebhookDeliveryGet(ctx context.Context, id string) (*WebhookDelivery, error) {
	return get[WebhookDelivery](ctx, c, "/api/v1/webhook-deliveries/"+pathEscape(id), nil)
}

// AgentWebhookSecretRotate replaces an agent's webhook signing secret; the new one is in the
// returned Agent.WebhookSecret, this once.
func (c *Client) AgentWebhookSecretRotate(ctx context.Context, agentID string) (*Agent, error) {
	return send[Agent](ctx, c, http.MethodPost, "/api/v1/agents/"+pathEscape(agentID)+"/webhook-secret/rotate", nil)
}

// WebhookDeliveryRetry sends a delivered or failed message again, with another 24 hours of
// attempts; a pending one is a 409.
func (c *Client) WebhookDeliveryRetry(ctx context.Context, id string) (*WebhookDelivery, error) {
	return send[WebhookDelivery](ctx, c, http.MethodPost, "/api/v1/webhook-deliveries/"+pathEscape(id)+"/retry", nil)
}
