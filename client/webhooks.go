package client

import (
	"context"
	"net/http"
)

// WebhookDeliveryList lists completion webhook deliveries, newest first.
func (c *Client) WebhookDeliveryList(ctx context.Context, o ListWebhookDeliveriesParams) (*List[WebhookDelivery], error) {
	return list[WebhookDelivery](ctx, c, "/api/v1/webhook-deliveries", query(o))
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
