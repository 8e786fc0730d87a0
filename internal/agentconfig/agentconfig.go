// Package agentconfig validates agent version configurations: the same rules apply to the
// API, to seed data and to fixtures.
package agentconfig

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"slices"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm/providers"
	"github.com/agentplane/agentplane/internal/mcpspec"
	"github.com/agentplane/agentplane/internal/schemacheck"
	"github.com/agentplane/agentplane/internal/store"
)

// Validate checks a config before it is saved: required fields, ranges, schemas
// that compile, references that exist, and the shape each agent type needs. agentID is the
// agent being configured ("" when creating), so it cannot list itself as a sub-agent.
func Validate(ctx context.Context, st Store, ws, agentType, agentID string, c *domain.AgentConfig) error {
	if err := domain.FirstErr(domain.NotBlank("config.model", c.Model), domain.MaxLen("config.model", c.Model, 200)); err != nil {
		return err
	}
	if c.CredentialID != "" {
		// A model outside the catalog (served by vLLM or Ollama, say) is fine with an explicit
		// credential: the credential says where to send it.
		cred, err := st.CredentialGet(ctx, ws, c.CredentialID)
		if store.IsNotFound(err) {
			return &store.ReferenceError{Field: "config.credential_id", Resource: string(domain.KindCredential), ID: c.CredentialID}
		}
		if err != nil {
			return err
		}
		if !providers.Known(cred.Provider) {
			return domain.Invalid("config.credential_id", "credential %s has provider %q, which is not a model provider (one of %s)",
				cred.ID, cred.Provider, strings.Join(providers.Names(), ", "))
		}
	} else if err := st.CheckRefs(ctx, ws, domain.KindLLMModel, "config.model", c.Model); err != nil {
		return err
	}
	if err := domain.FirstErr(validateFallbacks(ctx, st, ws, agentType, c), validateSimulation(c.Simulation)); err != nil {
		return err
	}
	if c.MaxRetries != nil && (*c.MaxRetries < 0 || *c.MaxRetries > 10) {
		return domain.Invalid("config.max_retries", "must be between 0 and 10")
	}
	if c.RequestTimeoutMS < 0 || c.RequestTimeoutMS > 3_600_000 {
		return domain.Invalid("config.request_timeout_ms", "must be between 1 and 3600000")
	}
	if c.Temperature != nil && (*c.Temperature < 0 || *c.Temperature > 2 || math.IsNaN(*c.Temperature)) {
		return domain.Invalid("config.temperature", "must be between 0 and 2")
	}
	if c.MaxTokens < 0 || c.MaxTokens > 1_000_000 {
		return domain.Invalid("config.max_tokens", "must be between 1 and 1000000")
	}
	if c.MaxIterations < 0 || c.MaxIterations > 100 {
		return domain.Invalid("config.max_iterations", "must be between 1 and 100")
	}
	if err := domain.MaxLen("config.system_prompt", c.SystemPrompt, 100_000); err != nil {
		return err
	}
	for field, raw := range map[string]json.RawMessage{"config.input_schema": c.InputSchema, "config.output_schema": c.OutputSchema} {
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		if _, err := schemacheck.Compile(raw); err != nil {
			return domain.Invalid(field, "is not a valid JSON Schema (2020-12): %s", err.Error())
		}
	}
	if c.PromptVersionID != "" && c.PromptID == "" {
		return domain.Invalid("config.prompt_version_id", "needs config.prompt_id")
	}
	if c.PromptID != "" {
		if err := st.CheckRefs(ctx, ws, domain.KindPrompt, "config.prompt_id", c.PromptID); err != nil {
			return err
		}
		if c.PromptVersionID != "" {
			ok, err := st.PromptVersionBelongs(ctx, ws, c.PromptID, c.PromptVersionID)
			if err != nil {
				return err
			}
			if !ok {
				return domain.Invalid("config.prompt_version_id", "prompt version %s is not a version of prompt %s", c.PromptVersionID, c.PromptID)
			}
		}
	}
	if c.ToolTimeoutMS < 0 || c.ToolTimeoutMS > 3_600_000 {
		return domain.Invalid("config.tool_timeout_ms", "must be between 1 and 3600000")
	}
	if err := validateTools(ctx, st, ws, c.Tools); err != nil {
		return err
	}
	if err := validateMemory(c.Memory); err != nil {
		return err
	}
	if err := validateDataSources(ctx, st, ws, c.DataSources); err != nil {
		return err
	}
	if err := domain.FirstErr(
		st.CheckRefs(ctx, ws, domain.KindGuardrail, "config.guardrails", c.Guardrails...),
		st.CheckRefs(ctx, ws, domain.KindAgent, "config.sub_agents", c.SubAgents...),
	); err != nil {
		return err
	}
	if agentID != "" && slices.Contains(c.SubAgents, agentID) {
		return domain.Invalid("config.sub_agents", "an agent cannot be its own sub-agent")
	}
	if err := validateApproval(c.Approval); err != nil {
		return err
	}
	typ, _ := LookupType(agentType)
	if c.AskUser && !typ.Tools {
		return domain.Invalid("config.ask_user", "the ask_user tool is for agent-type agents (this one is %s)", agentType)
	}
	if err := validateSteps(c.Steps, agentType); err != nil {
		return err
	}
	for i, step := range c.Steps {
		if step.AgentID != "" {
			if err := st.CheckRefs(ctx, ws, domain.KindAgent, fmt.Sprintf("config.steps[%d].agent_id", i), step.AgentID); err != nil {
				return err
			}
		}
	}
	if typ.Check != nil {
		return typ.Check(c)
	}
	return nil
}

// validateApproval checks config.approval: named checkpoints at a known stage, tool rules
// with a valid glob and mode, and a timeout with what it decides.
func validateApproval(a *domain.ApprovalConfig) error {
	if a == nil {
		return nil
	}
	for i, cp := range a.Checkpoints {
		f := fmt.Sprintf("config.approval.checkpoints[%d]", i)
		if err := domain.FirstErr(domain.NotBlank(f+".name", cp.Name), domain.OneOf(f+".when", cp.When, []string{"before_output", "before_tools"})); err != nil {
			return err
		}
	}
	for i, r := range a.Tools {
		f := fmt.Sprintf("config.approval.tools[%d]", i)
		if err := domain.FirstErr(domain.NotBlank(f+".match", r.Match), domain.MaxLen(f+".match", r.Match, 200), domain.OneOf(f+".mode", r.Mode, domain.ApprovalModes)); err != nil {
			return err
		}
		if _, err := path.Match(r.Match, ""); err != nil {
			return domain.Invalid(f+".match", "is not a valid glob: %q", r.Match)
		}
	}
	if a.TimeoutSeconds < 0 || a.TimeoutSeconds > 2_592_000 {
		return domain.Invalid("config.approval.timeout_seconds", "must be between 1 and 2592000 (30 days), got %d", a.TimeoutSeconds)
	}
	if a.OnTimeout != "" {
		if a.TimeoutSeconds == 0 {
			return domain.Invalid("config.approval.on_timeout", "needs config.approval.timeout_seconds")
		}
		return domain.OneOf("config.approval.on_timeout", a.OnTimeout, []string{"reject", "approve"})
	}
	return nil
}

// validateTools checks the MCP servers a config names: each exists and is named once, and a
// selection of tools names at least one, each in the MCP format and, when the server's
// tools are known (refreshed or set), one it offers.
func validateTools(ctx context.Context, st Store, ws string, refs []domain.ToolRef) error {
	seen := map[string]int{}
	for i, ref := range refs {
		f := fmt.Sprintf("config.tools[%d]", i)
		if err := domain.NotBlank(f, ref.MCPToolID); err != nil {
			return err
		}
		if j, dup := seen[ref.MCPToolID]; dup {
			return domain.Invalid(f, "mcp tool %s is already listed at config.tools[%d]; list its tools once", ref.MCPToolID, j)
		}
		seen[ref.MCPToolID] = i
	}
	ids := make([]string, len(refs))
	for i, ref := range refs {
		ids[i] = ref.MCPToolID
	}
	if err := st.CheckRefs(ctx, ws, domain.KindMCPTool, "config.tools", ids...); err != nil {
		return err
	}
	for i, ref := range refs {
		if ref.Names == nil {
			continue
		}
		f := fmt.Sprintf("config.tools[%d].names", i)
		if len(ref.Names) == 0 {
			return domain.Invalid(f, "must name at least one tool; give the mcp tool id alone for all its tools")
		}
		t, err := st.MCPToolGet(ctx, ws, ref.MCPToolID)
		if err != nil {
			return err
		}
		offered := make([]string, len(t.Tools))
		for k, def := range t.Tools {
			offered[k] = def.Name
		}
		for j, name := range ref.Names {
			if !mcpspec.ValidToolName(name) {
				return domain.Invalid(fmt.Sprintf("%s[%d]", f, j), "must be 1 to 128 letters, digits, '_', '-' or '.', got %q", name)
			}
			if len(offered) > 0 && !slices.Contains(offered, name) {
				return domain.Invalid(fmt.Sprintf("%s[%d]", f, j), "mcp tool %s offers no tool %q (it offers %s)", t.ID, name, strings.Join(offered, ", "))
			}
		}
	}
	return nil
}

// validateMemory checks config.memory: a scope of store.MemoryScopes and max_items from 1
// to 100 (0 is the default, 10).
func validateMemory(m *domain.MemoryConfig) error {
	if m == nil {
		return nil
	}
	if m.Scope != "" {
		if err := domain.OneOf("config.memory.scope", m.Scope, domain.MemoryScopes); err != nil {
			return err
		}
	}
	if m.MaxItems < 0 || m.MaxItems > 100 {
		return domain.Invalid("config.memory.max_items", "must be between 1 and 100, got %d", m.MaxItems)
	}
	return nil
}

// validateDataSources checks config.data_sources: each id is a data source of the workspace,
// listed once.
func validateDataSources(ctx context.Context, st Store, ws string, ids []string) error {
	seen := map[string]int{}
	for i, id := range ids {
		f := fmt.Sprintf("config.data_sources[%d]", i)
		if err := domain.NotBlank(f, id); err != nil {
			return err
		}
		if j, dup := seen[id]; dup {
			return domain.Invalid(f, "data source %s is already listed at config.data_sources[%d]", id, j)
		}
		seen[id] = i
	}
	return st.CheckRefs(ctx, ws, domain.KindDataSource, "config.data_sources", ids...)
}

// validateSteps checks step ids are unique and dependencies name earlier-declared or later
// steps without forming a cycle; chains may not declare dependencies (order is the list's).
func validateSteps(steps []domain.AgentStep, agentType string) error {
	ids := map[string]int{}
	for i, st := range steps {
		f := fmt.Sprintf("config.steps[%d]", i)
		if err := domain.NotBlank(f+".id", st.ID); err != nil {
			return err
		}
		if _, dup := ids[st.ID]; dup {
			return domain.Invalid(f+".id", "step id %q is used twice", st.ID)
		}
		ids[st.ID] = i
		if st.Instruction == "" && st.AgentID == "" {
			return domain.Invalid(f, "a step needs an instruction or an agent_id")
		}
	}
	for i, st := range steps {
		for j, dep := range st.DependsOn {
			f := fmt.Sprintf("config.steps[%d].depends_on[%d]", i, j)
			if t, _ := LookupType(agentType); t.OrderedSteps {
				return domain.Invalid(f, "chain steps run in list order; depends_on is for workflow agents")
			}
			if _, ok := ids[dep]; !ok {
				return domain.Invalid(f, "no step has id %q", dep)
			}
		}
	}
	// Kahn's algorithm: every step must become ready, else there is a cycle.
	indeg := make([]int, len(steps))
	for i, st := range steps {
		indeg[i] = len(st.DependsOn)
	}
	done := 0
	for progress := true; progress; {
		progress = false
		for i, st := range steps {
			if indeg[i] != 0 {
				continue
			}
			indeg[i] = -1
			done++
			progress = true
			for k, other := range steps {
				if slices.Contains(other.DependsOn, st.ID) {
					indeg[k]--
				}
			}
		}
	}
	if done != len(steps) {
		return domain.Invalid("config.steps", "the depends_on links form a cycle")
	}
	return nil
}
