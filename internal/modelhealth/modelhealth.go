// Package modelhealth is what every node knows of the health of model calls: credentials
// of a pool cooling down after a 429 or a 5xx (Pool), and circuits per provider and model
// that open after consecutive failures (Circuits). The state lives where the rate limits'
// does: the database (PostgreSQL, or the one SQLite file of a single server) or Redis.
package modelhealth

import (
	"context"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// Shared keeps health by key for every node, by the shared store's clock.
type Shared interface {
	// Read returns the state of those of keys that have one, and the store's clock.
	Read(ctx context.Context, keys []string) (map[string]domain.HealthState, time.Time, error)
	// Fail counts a failure of key, atomically, and returns its new state.
	Fail(ctx context.Context, key string, f domain.HealthFailure) (domain.HealthState, error)
	// Probe claims the one probe of a key whose hold-off has passed, holding it off for
	// lease more; only one caller gets true.
	Probe(ctx context.Context, key string, threshold int, lease time.Duration) (bool, error)
	// Clear forgets key's failures.
	Clear(ctx context.Context, key string) error
}

// Database keeps health in the store's model_health table.
type Database struct{ st Store }

var _ Shared = Database{}

// NewDatabase returns the health kept in st.
func NewDatabase(st Store) Database { return Database{st: st} }

// Read implements Shared.
func (d Database) Read(ctx context.Context, keys []string) (map[string]domain.HealthState, time.Time, error) {
	return d.st.HealthRead(ctx, keys)
}

// Fail implements Shared.
func (d Database) Fail(ctx context.Context, key string, f domain.HealthFailure) (domain.HealthState, error) {
	return d.st.HealthFail(ctx, key, f)
}

// Probe implements Shared.
func (d Database) Probe(ctx context.Context, key string, threshold int, lease time.Duration) (bool, error) {
	return d.st.HealthProbe(ctx, key, threshold, lease)
}

// Clear implements Shared.
func (d Database) Clear(ctx context.Context, key string) error { return d.st.HealthClear(ctx, key) }
