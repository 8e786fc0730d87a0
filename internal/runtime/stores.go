package runtime

import (
	"context"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/modelhealth"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
)

// CredentialStore is what CredentialRouter and MCPServers read: the credentials their calls
// use, and the health of pooled ones. *store.Store is one.
type CredentialStore interface {
	modelhealth.Store
	CredentialForProvider(ctx context.Context, ws string, provider string) (*domain.Credential, error)
	CredentialForRun(ctx context.Context, ws string, id string, provider string, box *secretbox.Box) (*domain.Credential, string, error)
	CredentialGet(ctx context.Context, ws string, id string) (*domain.Credential, error)
	CredentialPool(ctx context.Context, ws string, provider string, box *secretbox.Box) ([]*domain.Credential, []string, error)
	CredentialReveal(ctx context.Context, ws string, id string, box *secretbox.Box) (string, error)
}

var _ CredentialStore = (*store.Store)(nil)

// PromptStore is what Render reads: a prompt version's template. *store.Store is one.
type PromptStore interface {
	PromptTemplate(ctx context.Context, ws string, promptID string, versionID string) (string, error)
}

var _ PromptStore = (*store.Store)(nil)
