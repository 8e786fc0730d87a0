package domain

import (
	"encoding/json"
	"time"
)

// Webhook delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// DeliveryStatuses lists the statuses of a webhook delivery.
var DeliveryStatuses = []string{DeliveryPending, DeliveryDelivered, DeliveryFailed}

// WebhookDelivery is one message of the completion webhooks' outbox: an execution's end, sent
// to one receiver until it answers 2xx or the retries run out.
type WebhookDelivery struct {
	ID               string          `json:"id" doc:"Also the webhook-id header of every attempt: receivers deduplicate by it."`
	WorkspaceID      string          `json:"workspace_id"`
	ExecutionID      string          `json:"execution_id"`
	TargetType       string          `json:"target_type" enum:"agent,trigger" doc:"Whose webhook: the execution's agent, or the trigger that started it."`
	TargetID         string          `json:"target_id" doc:"The agent or trigger id."`
	URL              string          `json:"url"`
	EventType        string          `json:"event_type" example:"execution.completed" doc:"execution.completed, execution.failed, execution.cancelled or execution.rejected."`
	Status           string          `json:"status" enum:"pending,delivered,failed" doc:"pending: not answered 2xx yet, more attempts will come; delivered: a 2xx came; failed: no 2xx within 24 hours (or the URL is refused by the server's egress policy)."`
	Attempts         int             `json:"attempts" doc:"Attempts made so far."`
	NextAttemptAt    *Time           `json:"next_attempt_at" doc:"When the next attempt is due; null once delivered or failed."`
	LastAttemptAt    *Time           `json:"last_attempt_at"`
	LastResponseCode *int            `json:"last_response_code" doc:"The HTTP status of the last attempt; null when it got no answer (connection refused, timeout) or none was made."`
	LastError        *string         `json:"last_error" doc:"Why the last attempt did not count as delivered."`
	DeliveredAt      *Time           `json:"delivered_at"`
	ExpiresAt        Time            `json:"expires_at" doc:"No attempt is scheduled after it: 24 hours after the execution ended, or after a retry (POST /webhook-deliveries/{id}/retry)."`
	CreatedAt        Time            `json:"created_at"`
	UpdatedAt        Time            `json:"updated_at"`
	Payload          json.RawMessage `json:"payload,omitempty" doc:"The body POSTed: {type, timestamp, data}, data the execution as GET /executions/{id} returns it. Only in GET /webhook-deliveries/{id}."`

	// Secret is the receiver's signing secret, sealed (secretbox, bound to the workspace and
	// the delivery id); never part of the API.
	Secret string `json:"-"`
}

// WebhookDeliveryFilter narrows WebhookDeliveryList.
type WebhookDeliveryFilter struct {
	ExecutionID, Status string
}

// DefaultDeliveryWindow is how long after its creation a delivery is attempted when
// WebhookDeliveryCreate is given no ExpiresAt.
const DefaultDeliveryWindow = 24 * time.Hour

// WebhookAttempt is the outcome of one attempt, as WebhookDeliveryRecord writes it.
type WebhookAttempt struct {
	At           time.Time
	ResponseCode int    // 0: no answer
	Error        string // "" when delivered
	// Status is the delivery's status after the attempt; Next the next attempt's time when
	// it stays pending.
	Status string
	Next   time.Time
}
