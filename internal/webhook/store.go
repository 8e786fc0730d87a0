package webhook

import (
	"context"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// Store is what a Deliverer reads and writes outside the transaction that ends a run: it
// installs its terminal hook (whose transaction is the store's own) and claims, records and
// prunes the outbox's deliveries. *store.Store is one.
type Store interface {
	SetTerminalHook(fn store.TerminalHook)
	WebhookDeliveryClaim(ctx context.Context, node string, now time.Time, lease time.Duration, limit int) ([]*domain.WebhookDelivery, error)
	WebhookDeliveryPrune(ctx context.Context, before time.Time, limit int) (int, error)
	WebhookDeliveryRecord(ctx context.Context, id string, node string, attempt int, a domain.WebhookAttempt) (bool, error)
}

var _ Store = (*store.Store)(nil)
