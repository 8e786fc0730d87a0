package agentconfig

import (
	"context"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// Store is what validating an agent's config reads: the resources it names. *store.Store is
// one.
type Store interface {
	CheckRefs(ctx context.Context, ws string, kind domain.Kind, field string, ids ...string) error
	CredentialGet(ctx context.Context, ws string, id string) (*domain.Credential, error)
	LLMModelGet(ctx context.Context, ws string, id string) (*domain.LLMModel, error)
	MCPToolGet(ctx context.Context, ws string, id string) (*domain.MCPTool, error)
	PromptVersionBelongs(ctx context.Context, ws string, promptID string, versionID string) (bool, error)
}

var _ Store = (*store.Store)(nil)
