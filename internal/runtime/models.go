package runtime

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/llm/providers"
	"github.com/agentplane/agentplane/internal/llm/simulated"
	"github.com/agentplane/agentplane/internal/modelhealth"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/vault"
)

// ModelRouter decides which provider answers an agent version's model calls, and checks
// credentials against their service. There are two: CredentialRouter (serve: each
// workspace's provider credentials) and SimulatedRouter (the emulator, and serve
// --models simulated).
type ModelRouter interface {
	// Check reports, without contacting any provider, whether cfg's model calls could be
	// routed now; its error is a *ModelError. model is the catalog or workspace entry of
	// cfg.Model, nil when there is none.
	Check(ctx context.Context, ws string, cfg *domain.AgentConfig, model *domain.LLMModel) error
	// Route returns the provider for cfg's model calls (a *ModelError when there is none).
	Route(ctx context.Context, ws string, cfg *domain.AgentConfig, model *domain.LLMModel) (*Route, error)
	// Validate checks a credential against its service (a *ModelError when it cannot).
	Validate(ctx context.Context, ws string, c *domain.Credential) (*Validation, error)
	// Mode is "real" or "simulated", as /health reports it.
	Mode() string
}

// Route is where a run's model calls go.
type Route struct {
	Provider llm.Provider
	// Name is the provider's name for spans and messages: "openai", …, or "simulated".
	Name string
	// Credential is the name of the credential used (the names of a pool's, joined by
	// ", "); "" for the simulated model.
	Credential string
	// BaseURL is the API root the calls go to ("" for the simulated model): a model's
	// circuit is per provider, API root and model.
	BaseURL string
}

// Validation is the outcome of checking a credential against its service.
type Validation struct {
	Valid     bool        `json:"valid"`
	Status    int         `json:"status" doc:"The provider's HTTP status (200 when accepted; 0 when it could not be reached)."`
	Message   string      `json:"message"`
	CheckedAt domain.Time `json:"checked_at"`
}

// ModelError says a version's model cannot be run as configured (no credential for its
// provider, a credential gone, a model nobody knows); the message says how to fix it.
type ModelError struct{ Message string }

func (e *ModelError) Error() string { return e.Message }

func modelErrorf(format string, args ...any) *ModelError {
	return &ModelError{Message: fmt.Sprintf(format, args...)}
}

// SimulatedRouter sends every model call to the simulated model.
type SimulatedRouter struct{ Model *simulated.Model }

var (
	_ ModelRouter = SimulatedRouter{}
	_ ModelRouter = (*CredentialRouter)(nil)
)

// Mode is "simulated".
func (SimulatedRouter) Mode() string { return "simulated" }

// Check accepts every configuration.
func (SimulatedRouter) Check(context.Context, string, *domain.AgentConfig, *domain.LLMModel) error {
	return nil
}

// Route returns the simulated model, tuned by cfg.Simulation.
func (s SimulatedRouter) Route(_ context.Context, _ string, cfg *domain.AgentConfig, _ *domain.LLMModel) (*Route, error) {
	return simulatedRoute(s.Model, cfg), nil
}

// Validate does not contact the provider: every model is simulated here.
func (SimulatedRouter) Validate(_ context.Context, _ string, c *domain.Credential) (*Validation, error) {
	if !providers.Known(c.Provider) {
		return nil, notModelProvider(c)
	}
	return &Validation{Valid: true, Status: http.StatusOK, CheckedAt: domain.Now(),
		Message: "not sent to " + c.Provider + ": every model call here is answered by the simulated model"}, nil
}

func simulatedRoute(m *simulated.Model, cfg *domain.AgentConfig) *Route {
	var o simulated.Options
	if sim := cfg.Simulation; sim != nil {
		o = simulated.Options{LatencyMS: sim.LatencyMS, FailMessage: sim.FailMessage}
		if sim.Fail != nil {
			o.Fail, o.FailModels = sim.Fail.All, sim.Fail.Models
		}
	}
	return &Route{Provider: m.With(o), Name: "simulated"}
}

// CredentialRouter sends a version's model calls to the provider of its credential:
// config.credential_id, else the workspace's credential for the model's provider. A
// version with config.simulation runs on the simulated model.
type CredentialRouter struct {
	Store     CredentialStore
	Secrets   *secretbox.Box
	Simulated *simulated.Model
	// HTTPClient carries provider calls; nil uses llm's shared client.
	HTTPClient *http.Client
	// Health keeps the cool-downs of pooled credentials for every node; nil keeps them in
	// Store.
	Health modelhealth.Shared
}

// Mode is "real".
func (c *CredentialRouter) Mode() string { return "real" }

// Check finds the credential Route would use.
func (c *CredentialRouter) Check(ctx context.Context, ws string, cfg *domain.AgentConfig, model *domain.LLMModel) error {
	if cfg.Simulation != nil {
		return nil
	}
	cred, _, err := c.credential(ctx, ws, cfg, model, false)
	if err != nil {
		return err
	}
	if _, err := providers.BaseURL(cred.Provider, cred.Metadata); err != nil {
		return modelErrorf("credential %q: %v", cred.Name, err)
	}
	return nil
}

// Route builds the provider of the credential Check finds, with its value.
func (c *CredentialRouter) Route(ctx context.Context, ws string, cfg *domain.AgentConfig, model *domain.LLMModel) (*Route, error) {
	if cfg.Simulation != nil {
		return simulatedRoute(c.Simulated, cfg), nil
	}
	if cfg.CredentialID == "" && model != nil && providers.Known(model.Provider) {
		return c.poolRoute(ctx, ws, model.Provider)
	}
	cred, key, err := c.credential(ctx, ws, cfg, model, true)
	if err != nil {
		return nil, err
	}
	p, base, err := c.open(cred, key)
	if err != nil {
		return nil, err
	}
	return &Route{Provider: p, Name: cred.Provider, Credential: cred.Name, BaseURL: base}, nil
}

// open builds the provider a credential calls with its value, and its API root.
func (c *CredentialRouter) open(cred *domain.Credential, key string) (llm.Provider, string, error) {
	base, err := providers.BaseURL(cred.Provider, cred.Metadata)
	if err != nil {
		return nil, "", modelErrorf("credential %q: %v", cred.Name, err)
	}
	p, err := providers.New(llm.Endpoint{Provider: cred.Provider, BaseURL: base, APIKey: key, HTTPClient: c.HTTPClient})
	if err != nil {
		return nil, "", modelErrorf("credential %q: %v", cred.Name, err)
	}
	return p, base, nil
}

// poolRoute routes to the workspace's credentials for provider: the one there is (or the
// default), or a pool of several (see modelhealth.Pool) spread by metadata.weight.
func (c *CredentialRouter) poolRoute(ctx context.Context, ws, provider string) (*Route, error) {
	creds, keys, err := vault.CredentialPool(ctx, c.Store, ws, provider, c.Secrets)
	if store.IsNotFound(err) {
		return nil, noCredential(provider)
	}
	if err != nil {
		return nil, err
	}
	health := c.Health
	if health == nil {
		health = modelhealth.NewDatabase(c.Store)
	}
	pool := &modelhealth.Pool{Name: provider, Shared: health}
	rt := &Route{Provider: pool, Name: provider}
	names := make([]string, len(creds))
	for i, cred := range creds {
		p, base, err := c.open(cred, keys[i])
		if err != nil {
			return nil, err
		}
		w, ok := cred.Metadata["weight"].(float64)
		if !ok {
			w = 1
		}
		pool.Members = append(pool.Members, modelhealth.Member{ID: cred.ID, Name: cred.Name, Weight: w, Provider: p})
		names[i] = cred.Name
		if i == 0 {
			rt.BaseURL = base
		}
	}
	rt.Credential = strings.Join(names, ", ")
	if len(creds) == 1 {
		rt.Provider = pool.Members[0].Provider
	}
	return rt, nil
}

// validateTimeout bounds one credential check.
const validateTimeout = 15 * time.Second

// Validate lists the provider's models with the credential.
func (c *CredentialRouter) Validate(ctx context.Context, ws string, cred *domain.Credential) (*Validation, error) {
	if !providers.Known(cred.Provider) {
		return nil, notModelProvider(cred)
	}
	ep, err := c.endpoint(ctx, ws, cred)
	if err != nil {
		return nil, err
	}
	p, err := providers.New(ep)
	if err != nil {
		return nil, modelErrorf("credential %q: %v", cred.Name, err)
	}
	lister, ok := p.(llm.ModelLister)
	if !ok {
		return nil, modelErrorf("credential %q: provider %s cannot be checked", cred.Name, cred.Provider)
	}
	ctx, cancel := context.WithTimeout(ctx, validateTimeout)
	defer cancel()
	models, err := lister.ListModels(ctx)
	v := &Validation{CheckedAt: domain.Now()}
	var pe *llm.Error
	switch {
	case err == nil:
		v.Valid, v.Status = true, http.StatusOK
		v.Message = fmt.Sprintf("%s accepted the credential; it may use %d models", cred.Provider, len(models))
	case errors.As(err, &pe):
		v.Status, v.Message = pe.Status, pe.Message
		if pe.Status == 0 {
			v.Message = "could not reach " + cred.Provider + " at " + ep.BaseURL + ": " + pe.Message
		}
	case ctx.Err() != nil:
		v.Message = fmt.Sprintf("%s did not answer within %s", cred.Provider, validateTimeout)
	default:
		v.Message = llm.Redact(err.Error(), ep.APIKey)
	}
	return v, nil
}

// credential finds the credential a configuration's model calls use, with its value when
// withValue is set.
func (c *CredentialRouter) credential(ctx context.Context, ws string, cfg *domain.AgentConfig, model *domain.LLMModel, withValue bool) (*domain.Credential, string, error) {
	id, provider := cfg.CredentialID, ""
	if id == "" {
		if model == nil {
			return nil, "", modelErrorf("llm model %s is not in the catalog or this workspace: register it with POST /api/v1/llm-models, or set config.credential_id", cfg.Model)
		}
		if !providers.Known(model.Provider) {
			return nil, "", modelErrorf("llm model %s is from %s, which has no API of its own here: set config.credential_id to the credential of a provider that serves it (groq, together, openrouter or openai_compatible, say)", model.ID, model.Provider)
		}
		provider = model.Provider
	}
	var cred *domain.Credential
	var key string
	var err error
	if withValue {
		cred, key, err = vault.CredentialForRun(ctx, c.Store, ws, id, provider, c.Secrets)
	} else if id != "" {
		cred, err = c.Store.CredentialGet(ctx, ws, id)
	} else {
		cred, err = c.Store.CredentialForProvider(ctx, ws, provider)
	}
	switch {
	case store.IsNotFound(err) && id != "":
		return nil, "", modelErrorf("credential %s (config.credential_id) does not exist in this workspace: add one with POST /api/v1/credentials and set config.credential_id to its id", id)
	case store.IsNotFound(err):
		return nil, "", noCredential(provider)
	}
	return cred, key, err
}

// endpoint resolves where and as whom a credential calls its provider.
func (c *CredentialRouter) endpoint(ctx context.Context, ws string, cred *domain.Credential) (llm.Endpoint, error) {
	base, err := providers.BaseURL(cred.Provider, cred.Metadata)
	if err != nil {
		return llm.Endpoint{}, modelErrorf("credential %q: %v", cred.Name, err)
	}
	key, err := vault.CredentialReveal(ctx, c.Store, ws, cred.ID, c.Secrets)
	if store.IsNotFound(err) {
		return llm.Endpoint{}, modelErrorf("credential %q was deleted: add one with POST /api/v1/credentials", cred.Name)
	}
	if err != nil {
		return llm.Endpoint{}, err
	}
	return llm.Endpoint{Provider: cred.Provider, BaseURL: base, APIKey: key, HTTPClient: c.HTTPClient}, nil
}

// noCredential says a workspace has no credential for a provider, and how to add one.
func noCredential(provider string) error {
	return modelErrorf("no credential for provider %s in this workspace: add one in Studio (the Credentials page, /studio#/credentials), "+
		"with the CLI (agentplane credentials add --provider %s --value …) or with POST /api/v1/credentials", provider, provider)
}

func notModelProvider(c *domain.Credential) error {
	return modelErrorf("credential %s has provider %q: only model-provider credentials can be validated (provider one of %s)",
		c.ID, c.Provider, strings.Join(providers.Names(), ", "))
}
