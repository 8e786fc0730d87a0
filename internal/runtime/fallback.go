package runtime

import (
	"context"
	"errors"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/llm/providers"
)

// target is one model a call may go to: the version's model (index 0) or one of its
// config.fallback_models, with its catalog entry (nil outside the catalog and the
// workspace's models) and its route.
type target struct {
	model string
	entry *domain.LLMModel
	route *Route
}

// target resolves the i-th model of the pass's call chain, once per pass.
func (r *run) target(ctx context.Context, i int) (*target, error) {
	if i == 0 {
		m, err := r.modelEntry(ctx)
		if err != nil {
			return nil, err
		}
		rt, err := r.provider(ctx)
		if err != nil {
			return nil, err
		}
		return &target{model: r.cfg.Model, entry: m, route: rt}, nil
	}
	if r.fallbacks == nil {
		r.fallbacks = make([]*target, len(r.cfg.FallbackModels))
	}
	if t := r.fallbacks[i-1]; t != nil {
		return t, nil
	}
	id := r.cfg.FallbackModels[i-1]
	m, err := r.e.model(ctx, r.x.WorkspaceID, id)
	if err != nil {
		return nil, err
	}
	cfg := *r.cfg
	cfg.Model, cfg.FallbackModels = id, nil
	// config.credential_id serves a fallback of its own provider (or one outside the
	// catalog, which only it can name); a fallback of another provider uses the
	// workspace's credentials for that provider.
	if cfg.CredentialID != "" && m != nil && providers.Known(m.Provider) && r.route != nil && r.route.Name != m.Provider {
		cfg.CredentialID = ""
	}
	rt, err := r.e.router.Route(ctx, r.x.WorkspaceID, &cfg, m)
	if err != nil {
		return nil, err
	}
	t := &target{model: id, entry: m, route: rt}
	r.fallbacks[i-1] = t
	return t, nil
}

// fallsBack reports whether a failed model call may go on to the next model of the chain:
// the provider failed in a way another attempt may not (a connection error, 429, 5xx, 529)
// after its retries, or the call timed out, or the model is known down.
func fallsBack(err error) bool {
	var pe *llm.Error
	var te *llm.TimeoutError
	var de *downError
	switch {
	case errors.As(err, &pe):
		return pe.Retryable()
	case errors.As(err, &te), errors.As(err, &de):
		return true
	}
	return false
}

// downError is the error of a model skipped because it is known down.
type downError struct{ msg string }

func (e *downError) Error() string { return e.msg }

// chainError is the error of a call whose every model failed: each failure in order, the
// last one kept for errors.As (the terminal frame's code).
type chainError struct {
	earlier []string
	err     error
}

func (e *chainError) Error() string {
	return strings.Join(append(append([]string{}, e.earlier...), e.err.Error()), "; then ")
}

func (e *chainError) Unwrap() error { return e.err }
