package mcpspec

import (
	"context"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// Store is what validating an MCP tool reads: the credential it names. *store.Store is one.
type Store interface {
	CredentialGet(ctx context.Context, ws string, id string) (*domain.Credential, error)
}

var _ Store = (*store.Store)(nil)
