package modelhealth

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm"
)

// Defaults of a pool credential's cool-down when the provider gives no Retry-After: it
// starts at DefaultCoolBase and doubles with each failure in a row, up to DefaultCoolMax.
const (
	DefaultCoolBase = time.Second
	DefaultCoolMax  = 5 * time.Minute
)

// Member is one credential of a pool.
type Member struct {
	ID, Name string
	// Weight is the member's share of the calls (metadata.weight, default 1).
	Weight   float64
	Provider llm.Provider
}

// Pool is a provider reached through several credentials: each call goes to a member drawn
// by weight among those not cooling down. A member answering 429 or a 5xx cools down for
// every node (the provider's Retry-After, else a wait that doubles with each failure in a
// row) and the call goes on to the next member, while nothing of it has streamed.
type Pool struct {
	Name      string // the provider, for errors
	Members   []Member
	Shared    Shared
	Base, Max time.Duration // default DefaultCoolBase, DefaultCoolMax
}

var _ llm.Provider = (*Pool)(nil)

// CredentialKey names the health of a credential.
func CredentialKey(id string) string { return "credential:" + id }

// Complete implements llm.Provider.
func (p *Pool) Complete(ctx context.Context, req llm.Request, emit func(llm.Event) error) (*llm.Response, error) {
	keys := make([]string, len(p.Members))
	for i, m := range p.Members {
		keys[i] = CredentialKey(m.ID)
	}
	states, now, err := p.Shared.Read(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("read the health of the %s credentials: %w", p.Name, err)
	}
	var ready []int
	soonest := time.Time{}
	for i, k := range keys {
		if u := states[k].Until; u.After(now) {
			if soonest.IsZero() || u.Before(soonest) {
				soonest = u
			}
			continue
		}
		ready = append(ready, i)
	}
	if len(ready) == 0 {
		return nil, &llm.Error{Provider: p.Name, Status: http.StatusTooManyRequests, RetryAfter: soonest.Sub(now),
			Message: fmt.Sprintf("every credential of the pool (%s) is cooling down after 429 or 5xx answers", p.names())}
	}
	var last error
	for _, i := range p.order(ready) {
		m := p.Members[i]
		sent := false
		resp, err := m.Provider.Complete(ctx, req, func(ev llm.Event) error {
			sent = true
			return emit(ev)
		})
		if err == nil {
			if states[keys[i]].Failures > 0 {
				if err := p.Shared.Clear(ctx, keys[i]); err != nil {
					return nil, err
				}
			}
			return resp, nil
		}
		var pe *llm.Error
		if !errors.As(err, &pe) || !(pe.Status == http.StatusTooManyRequests || pe.Status >= 500) {
			return nil, err
		}
		f := domain.HealthFailure{Threshold: 1, Base: p.Base, Max: p.Max, RetryAfter: pe.RetryAfter}
		if f.Base <= 0 {
			f.Base = DefaultCoolBase
		}
		if f.Max <= 0 {
			f.Max = DefaultCoolMax
		}
		if _, ferr := p.Shared.Fail(context.WithoutCancel(ctx), keys[i], f); ferr != nil {
			return nil, errors.Join(err, ferr)
		}
		if sent || ctx.Err() != nil {
			return nil, err
		}
		last = err
	}
	return nil, last
}

// order draws the ready members one after another, each with a chance proportional to
// its weight.
func (p *Pool) order(ready []int) []int {
	left := append([]int(nil), ready...)
	out := make([]int, 0, len(left))
	for len(left) > 0 {
		total := 0.0
		for _, i := range left {
			total += p.Members[i].Weight
		}
		r, k := rand.Float64()*total, 0
		for k < len(left)-1 && r >= p.Members[left[k]].Weight {
			r -= p.Members[left[k]].Weight
			k++
		}
		out = append(out, left[k])
		left = append(left[:k], left[k+1:]...)
	}
	return out
}

func (p *Pool) names() string {
	names := make([]string, len(p.Members))
	for i, m := range p.Members {
		names[i] = m.Name
	}
	return strings.Join(names, ", ")
}
