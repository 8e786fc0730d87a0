package modelhealth

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm"
)

// Defaults of Circuits.
const (
	DefaultThreshold = 5
	DefaultCooldown  = 30 * time.Second
)

// Circuits are the circuits of providers' models, shared by every node: after Threshold
// consecutive failed calls (a connection error, a timeout, a 5xx or 529; not a 429, which
// is a credential's, nor a refusal of the request) a model's circuit opens and calls skip
// it for Cooldown; then one call, the probe, goes through: its success closes the circuit,
// its failure opens it again.
type Circuits struct {
	Shared    Shared
	Threshold int           // default DefaultThreshold
	Cooldown  time.Duration // default DefaultCooldown
}

// Gate is what Allow decided for a call.
type Gate struct {
	// Open says the call must skip the model until Until (another node may be probing).
	Open  bool
	Until time.Time
	// failing says the model has failures on record, which a success clears.
	failing bool
}

// CircuitKey names the circuit of a model served by a provider at an API root.
func CircuitKey(provider, baseURL, model string) string {
	return "circuit:" + provider + ":" + baseURL + ":" + model
}

// FailuresToOpen is how many failed calls in a row open a circuit.
func (c *Circuits) FailuresToOpen() int {
	if c.Threshold > 0 {
		return c.Threshold
	}
	return DefaultThreshold
}

func (c *Circuits) cooldown() time.Duration {
	if c.Cooldown > 0 {
		return c.Cooldown
	}
	return DefaultCooldown
}

// Allow decides whether a call may go to the model of key now. A circuit whose cool-down
// has passed lets one call through, on one node. When the shared store cannot be read the
// call goes through: the store's failure is not the model's.
func (c *Circuits) Allow(ctx context.Context, key string) (Gate, error) {
	states, now, err := c.Shared.Read(ctx, []string{key})
	if err != nil {
		return Gate{}, err
	}
	st, ok := states[key]
	if !ok {
		return Gate{}, nil
	}
	if st.Failures < c.FailuresToOpen() {
		return Gate{failing: true}, nil
	}
	if st.Until.After(now) {
		return Gate{Open: true, Until: st.Until}, nil
	}
	probe, err := c.Shared.Probe(ctx, key, c.FailuresToOpen(), c.cooldown())
	if err != nil {
		return Gate{}, err
	}
	if !probe {
		return Gate{Open: true, Until: now.Add(c.cooldown())}, nil // another node probes
	}
	return Gate{failing: true}, nil
}

// Record counts the outcome of a call Allow let through: a failure of the model's own
// (see Counts) toward opening its circuit, a success closing it.
func (c *Circuits) Record(ctx context.Context, key string, g Gate, err error) error {
	switch {
	case err == nil && g.failing:
		return c.Shared.Clear(ctx, key)
	case err != nil && Counts(err):
		_, err := c.Shared.Fail(ctx, key, domain.HealthFailure{Threshold: c.FailuresToOpen(), Base: c.cooldown(), Max: c.cooldown()})
		return err
	}
	return nil
}

// Counts reports whether a failed call counts against its model's circuit: the provider
// could not be reached or did not answer in time, or answered a server error.
func Counts(err error) bool {
	var pe *llm.Error
	var te *llm.TimeoutError
	switch {
	case errors.As(err, &pe):
		return !pe.Permanent && pe.Retryable() && pe.Status != http.StatusTooManyRequests
	case errors.As(err, &te):
		return true
	}
	return false
}
