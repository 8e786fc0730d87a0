package runtime

import (
	"context"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// Metrics is told what the engine does, for monitoring: every run that ends, by whichever
// path ends it (its pass, a cancel or deny of a run no pass holds, a rescue), and every model
// call. Its methods are called on the engine's paths and must return at once. The Prometheus
// implementation is metrics.Metrics; nil in Config reports nothing.
type Metrics interface {
	RunEnded(RunEnd)
	ModelCalled(ModelCall)
}

// RunEnd describes a run that reached a terminal status. Its fields are labels of low
// cardinality: no ids.
type RunEnd struct {
	Status    string // completed, failed, cancelled or rejected
	AgentType string // the agent's type; "unknown" when the agent is gone
	// Provider is where the run's model calls went ("openai", …, "simulated"), or the
	// provider of its model when no call of the last pass was routed; "unknown" when neither
	// is known.
	Provider string
	Duration time.Duration // from creation to the end, as the execution's duration_ms
}

// ModelCall describes one model call (its retries included).
type ModelCall struct {
	Provider                       string
	Duration                       time.Duration
	PromptTokens, CompletionTokens int
	Cost                           float64 // USD, from the model's prices
	Failed                         bool
}

// noMetrics reports nothing.
type noMetrics struct{}

func (noMetrics) RunEnded(RunEnd)       {}
func (noMetrics) ModelCalled(ModelCall) {}

// unknown labels what could not be found out.
const unknown = "unknown"

// observeModelCall reports a model call whose span has ended (deferred by call).
func (r *run) observeModelCall(sp *domain.Span) {
	mc := ModelCall{Provider: unknown, PromptTokens: sp.TokenUsage.PromptTokens, CompletionTokens: sp.TokenUsage.CompletionTokens,
		Cost: sp.Cost, Failed: sp.Status == "error"}
	if p, ok := sp.Attributes["provider"].(string); ok && p != "" {
		mc.Provider = p
	}
	if sp.DurationMS != nil {
		mc.Duration = time.Duration(*sp.DurationMS) * time.Millisecond
	}
	r.e.metrics.ModelCalled(mc)
}

// reportEnd reports an execution that reached a terminal status. cfg, agent and route are
// what the caller already holds (nil: looked up, from the store or the engine's caches).
func (e *Engine) reportEnd(ctx context.Context, x *domain.Execution, cfg *domain.AgentConfig, status string, durationMS int64, agent *domain.Agent, route *Route) {
	if !domain.IsTerminal(status) {
		return
	}
	end := RunEnd{Status: status, AgentType: unknown, Provider: unknown, Duration: time.Duration(durationMS) * time.Millisecond}
	if agent == nil {
		agent, _ = e.st.AgentGet(ctx, x.WorkspaceID, x.AgentID)
	}
	if agent != nil {
		end.AgentType = agent.Type
	}
	end.Provider = e.providerOf(ctx, x, cfg, route)
	e.metrics.RunEnded(end)
}

// providerOf names where x's model calls go: the route of its pass when one was resolved;
// "simulated" when the router or the version simulates; else the provider of its model in
// the catalog or the workspace.
func (e *Engine) providerOf(ctx context.Context, x *domain.Execution, cfg *domain.AgentConfig, route *Route) string {
	if route != nil {
		return route.Name
	}
	if cfg == nil {
		cfg = x.Config
	}
	if cfg == nil && x.AgentVersionID != nil {
		cfg = e.versionConfig(ctx, x.WorkspaceID, x.AgentID, *x.AgentVersionID)
	}
	switch {
	case e.router.Mode() == "simulated" || cfg != nil && cfg.Simulation != nil:
		return "simulated"
	case cfg == nil:
		return unknown
	}
	if m, err := e.model(ctx, x.WorkspaceID, cfg.Model); err == nil && m != nil {
		return m.Provider
	}
	return unknown
}
