package seed

import (
	"context"

	"github.com/agentplane/agentplane/internal/agentconfig"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/mcpspec"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/vault"
)

// Store is what loading a seed writes (and reads back to find what is already there): the
// catalog, agents, prompts, guardrails, credentials, data sources and MCP tools, and what
// validating their configs reads. *store.Store is one.
type Store interface {
	agentconfig.Store
	mcpspec.Store
	vault.CredentialCreator
	AgentCreate(ctx context.Context, a *domain.Agent, config *domain.AgentConfig, notes string) (*domain.Agent, error)
	AgentGet(ctx context.Context, ws string, id string) (*domain.Agent, error)
	AgentVersionCreate(ctx context.Context, v *domain.AgentVersion) (*domain.AgentVersion, error)
	AgentVersionPromote(ctx context.Context, ws string, agentID string, versionID string) error
	DataSourceCreate(ctx context.Context, d *domain.DataSource, config domain.JSONObject, notes string) (*domain.DataSource, error)
	GuardrailCreate(ctx context.Context, g *domain.Guardrail) (*domain.Guardrail, error)
	LLMModelUpsert(ctx context.Context, m *domain.LLMModel) error
	MCPToolCreate(ctx context.Context, t *domain.MCPTool) (*domain.MCPTool, error)
	PromptCreate(ctx context.Context, p *domain.Prompt, first *domain.PromptVersion) (*domain.Prompt, error)
	PromptGet(ctx context.Context, ws string, id string) (*domain.Prompt, error)
	PromptList(ctx context.Context, ws string, f domain.PromptFilter, p domain.Page) ([]*domain.Prompt, int, error)
	PromptVersionCreate(ctx context.Context, v *domain.PromptVersion) (*domain.PromptVersion, error)
	PromptVersionList(ctx context.Context, ws string, promptID string, p domain.Page) ([]*domain.PromptVersion, int, error)
	PromptVersionPromote(ctx context.Context, ws string, promptID string, versionID string) error
}

var _ Store = (*store.Store)(nil)
