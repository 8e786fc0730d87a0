package agentconfig

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// maxFallbacks bounds config.fallback_models.
const maxFallbacks = 5

// validateFallbacks checks config.fallback_models: at most maxFallbacks distinct models other
// than config.model, each in the catalog or the workspace's models (a model outside them
// is fine with config.credential_id, which then serves it), and each able to serve what the
// version needs, by its catalog capabilities (see needs).
func validateFallbacks(ctx context.Context, st Store, ws, agentType string, c *domain.AgentConfig) error {
	if len(c.FallbackModels) > maxFallbacks {
		return domain.Invalid("config.fallback_models", "may list at most %d models, got %d", maxFallbacks, len(c.FallbackModels))
	}
	needed := needs(agentType, c)
	for i, id := range c.FallbackModels {
		f := fmt.Sprintf("config.fallback_models[%d]", i)
		if err := domain.FirstErr(domain.NotBlank(f, id), domain.MaxLen(f, id, 200)); err != nil {
			return err
		}
		if id == c.Model {
			return domain.Invalid(f, "is config.model itself; list other models to fall back to")
		}
		if j := slices.Index(c.FallbackModels[:i], id); j >= 0 {
			return domain.Invalid(f, "model %s is already listed at config.fallback_models[%d]", id, j)
		}
		m, err := st.LLMModelGet(ctx, ws, id)
		if store.IsNotFound(err) {
			if c.CredentialID != "" {
				continue // served by config.credential_id; its capabilities are not known here
			}
			return &store.ReferenceError{Field: f, Resource: string(domain.KindLLMModel), ID: id}
		}
		if err != nil {
			return err
		}
		for _, n := range needed {
			if !slices.ContainsFunc(n.serves, func(capability string) bool { return slices.Contains(m.Capabilities, capability) }) {
				return domain.Invalid(f, "model %s cannot serve this version: it lacks the %s capability, needed for %s (its capabilities: %s)",
					id, strings.Join(n.serves, " or "), n.why, strings.Join(m.Capabilities, ", "))
			}
		}
	}
	return nil
}

// need is a capability a version needs of its models: one of serves, because of why.
type need struct {
	serves []string
	why    string
}

// needs lists what a version asks of every model that answers it: tools when an
// agent-type agent has tools to call (MCP tools, data sources, memory), structured output
// when it has an output_schema (json_mode, or tools: a forced tool call carries the JSON),
// and images when its input_schema takes them (a contentMediaType image/…).
func needs(agentType string, c *domain.AgentConfig) []need {
	var out []need
	if t, _ := LookupType(agentType); t.Tools && (len(c.Tools) > 0 || len(c.DataSources) > 0 || c.Memory != nil && c.Memory.Enabled) {
		out = append(out, need{serves: []string{"tools"}, why: "the tools of config.tools, config.data_sources or config.memory"})
	}
	if s := bytes.TrimSpace(c.OutputSchema); len(s) > 0 && string(s) != "null" {
		out = append(out, need{serves: []string{"json_mode", "tools"}, why: "the structured output of config.output_schema"})
	}
	if takesImages(c.InputSchema) {
		out = append(out, need{serves: []string{"vision"}, why: "the images config.input_schema takes"})
	}
	return out
}

// takesImages reports whether a JSON Schema declares, anywhere, a contentMediaType of
// image/….
func takesImages(schema json.RawMessage) bool {
	var v any
	if len(schema) == 0 || json.Unmarshal(schema, &v) != nil {
		return false
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			if t, ok := v["contentMediaType"].(string); ok && strings.HasPrefix(t, "image/") {
				return true
			}
			for _, x := range v {
				if walk(x) {
					return true
				}
			}
		case []any:
			return slices.ContainsFunc(v, walk)
		}
		return false
	}
	return walk(v)
}

// validateSimulation checks config.simulation.fail's models: named, each with a status of
// store.SimFailStatuses.
func validateSimulation(s *domain.Simulation) error {
	if s == nil || s.Fail == nil {
		return nil
	}
	for model, status := range s.Fail.Models {
		f := "config.simulation.fail." + model
		if strings.TrimSpace(model) == "" {
			return domain.Invalid("config.simulation.fail", "model ids must not be empty")
		}
		if !slices.Contains(domain.SimFailStatuses, status) {
			return domain.Invalid(f, "must be an HTTP status of %v, got %d", domain.SimFailStatuses, status)
		}
	}
	return nil
}
