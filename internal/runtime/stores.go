package runtime

import (
	"context"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/modelhealth"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/vault"
)

// CredentialStore is what CredentialRouter and MCPServers read: the credentials their calls
// use, and the health of pooled ones. *store.Store is one.
type CredentialStore interface {
	modelhealth.Store
	vault.CredentialOpener
	CredentialForProvider(ctx context.Context, ws string, provider string) (*domain.Credential, error)
	CredentialGet(ctx context.Context, ws string, id string) (*domain.Credential, error)
}

var _ CredentialStore = (*store.Store)(nil)

// PromptStore is what Render reads: a prompt version's template. *store.Store is one.
type PromptStore interface {
	PromptTemplate(ctx context.Context, ws string, promptID string, versionID string) (string, error)
}

var _ PromptStore = (*store.Store)(nil)
