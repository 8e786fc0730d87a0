package seed

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentplane/agentplane/internal/agentconfig"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/secretbox"
)

// loader loads entries one by one and remembers what finish must do.
type loader struct {
	st  Store
	ws  string
	box *secretbox.Box
	// agents that received versions but no active one; finish promotes their latest.
	needActive map[string]string
}

func (l *loader) load(ctx context.Context, file string, e json.RawMessage) error {
	switch file {
	case "llm_models.json":
		return l.llmModel(ctx, e)
	case "agents.json":
		return l.agent(ctx, e)
	case "agent_versions.json":
		return l.agentVersion(ctx, e)
	case "credentials.json":
		return l.credential(ctx, e)
	case "mcp_tools.json":
		return l.mcpTool(ctx, e)
	case "guardrails.json":
		return l.guardrail(ctx, e)
	case "data_sources.json":
		return l.dataSource(ctx, e)
	case "prompts.json":
		return l.prompt(ctx, e)
	case "prompt_versions.json":
		return l.promptVersion(ctx, e)
	}
	return fmt.Errorf("no loader for %s", file)
}

func (l *loader) llmModel(ctx context.Context, e json.RawMessage) error {
	var m domain.LLMModel
	if err := strict(e, &m); err != nil {
		return err
	}
	if m.ID == "" || m.Provider == "" || m.Name == "" || m.ContextWindow <= 0 {
		return fmt.Errorf("id, provider, name and a positive context_window are required")
	}
	if m.InputPricePerMillion < 0 || m.OutputPricePerMillion < 0 {
		return fmt.Errorf("prices must not be negative")
	}
	return l.st.LLMModelUpsert(ctx, &m)
}

type agentEntry struct {
	ID          string              `json:"id"`
	Name        string              `json:"name"`
	Description string              `json:"description"`
	Type        string              `json:"type"`
	Status      string              `json:"status"`
	Tags        []string            `json:"tags"`
	Metadata    map[string]any      `json:"metadata"`
	Config      *domain.AgentConfig `json:"config"`
}

func (l *loader) agent(ctx context.Context, e json.RawMessage) error {
	var a agentEntry
	if err := strict(e, &a); err != nil {
		return err
	}
	if a.Status == "" {
		a.Status = "active"
	}
	if err := checkAgent(a); err != nil {
		return err
	}
	if a.Config != nil {
		if err := agentconfig.Validate(ctx, l.st, l.ws, a.Type, a.ID, a.Config); err != nil {
			return err
		}
	}
	_, err := l.st.AgentCreate(ctx, &domain.Agent{ID: a.ID, WorkspaceID: l.ws, Name: a.Name, Description: a.Description,
		Type: a.Type, Status: a.Status, Tags: a.Tags, Metadata: a.Metadata}, a.Config, "")
	return err
}

func checkAgent(a agentEntry) error {
	if a.Name == "" {
		return fmt.Errorf("name is required")
	}
	if !contains(agentconfig.Types(), a.Type) {
		return fmt.Errorf("type %q is not one of %v", a.Type, agentconfig.Types())
	}
	if !contains(domain.AgentStatuses, a.Status) {
		return fmt.Errorf("status %q is not one of %v", a.Status, domain.AgentStatuses)
	}
	return nil
}

type agentVersionEntry struct {
	ID      string             `json:"id"`
	AgentID string             `json:"agent_id"`
	Version int                `json:"version"`
	Notes   string             `json:"notes"`
	Active  bool               `json:"active"`
	Config  domain.AgentConfig `json:"config"`
}

func (l *loader) agentVersion(ctx context.Context, e json.RawMessage) error {
	var v agentVersionEntry
	if err := strict(e, &v); err != nil {
		return err
	}
	if v.AgentID == "" {
		return fmt.Errorf("agent_id is required")
	}
	a, err := l.st.AgentGet(ctx, l.ws, v.AgentID)
	if err != nil {
		return fmt.Errorf("agent_id: %w", err)
	}
	if err := agentconfig.Validate(ctx, l.st, l.ws, a.Type, a.ID, &v.Config); err != nil {
		return err
	}
	created, err := l.st.AgentVersionCreate(ctx, &domain.AgentVersion{ID: v.ID, WorkspaceID: l.ws, AgentID: v.AgentID,
		Version: v.Version, Config: v.Config, Notes: v.Notes})
	if err != nil {
		return err
	}
	if v.Active {
		delete(l.needActive, a.ID)
		return l.st.AgentVersionPromote(ctx, l.ws, a.ID, created.ID)
	}
	if a.ActiveVersionID == nil {
		if l.needActive == nil {
			l.needActive = map[string]string{}
		}
		l.needActive[a.ID] = created.ID // versions arrive in order; the last one wins
	}
	return nil
}

// finish promotes the latest version of agents whose fixtures marked none active.
func (l *loader) finish(ctx context.Context) error {
	if err := l.finishPrompts(ctx); err != nil {
		return err
	}
	for agentID, versionID := range l.needActive {
		if err := l.st.AgentVersionPromote(ctx, l.ws, agentID, versionID); err != nil {
			return fmt.Errorf("activate latest version of agent %s: %w", agentID, err)
		}
	}
	return nil
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
