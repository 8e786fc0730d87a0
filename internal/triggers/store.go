package triggers

import (
	"context"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/vault"
)

// Store is what the scheduler and the replier read and write: the triggers that are due,
// their ticks and replies, and the agents, runs and credentials those name. *store.Store is
// one; a transaction (BeforeCreate, the claims) is always the store's own.
type Store interface {
	vault.CredentialOpener
	AgentGet(ctx context.Context, ws string, id string) (*domain.Agent, error)
	AgentVersionGet(ctx context.Context, ws string, agentID string, versionID string) (*domain.AgentVersion, error)
	ApprovalPending(ctx context.Context, ws string, executionID string) (*domain.Approval, error)
	ChatReplyOf(ctx context.Context, ws string, executionID string) (*domain.ChatMessage, error)
	ExecutionGet(ctx context.Context, ws string, id string) (*domain.Execution, error)
	TriggerEventsPrune(ctx context.Context, now time.Time) (int64, error)
	TriggerGet(ctx context.Context, ws string, id string) (*domain.Trigger, error)
	TriggerRepliesDue(ctx context.Context, now time.Time, limit int) ([]string, error)
	TriggerRepliesPrune(ctx context.Context, now time.Time) (int64, error)
	TriggerReplyClaim(ctx context.Context, executionID string, now time.Time, lease time.Duration) (*domain.TriggerReply, error)
	TriggerReplyFinish(ctx context.Context, executionID string, status string, lastError string, retryAt time.Time) error
	TriggerTickClaim(ctx context.Context, id string, old time.Time, next time.Time, ran *time.Time) error
	TriggersDue(ctx context.Context, now time.Time, limit int) ([]*domain.Trigger, error)
}

var _ Store = (*store.Store)(nil)
