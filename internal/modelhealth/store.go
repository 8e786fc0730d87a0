package modelhealth

import (
	"context"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// Store is where Database keeps the health of pooled credentials. *store.Store is one.
type Store interface {
	HealthRead(ctx context.Context, keys []string) (map[string]domain.HealthState, time.Time, error)
	HealthFail(ctx context.Context, key string, f domain.HealthFailure) (domain.HealthState, error)
	HealthProbe(ctx context.Context, key string, threshold int, lease time.Duration) (bool, error)
	HealthClear(ctx context.Context, key string) error
}

var _ Store = (*store.Store)(nil)
