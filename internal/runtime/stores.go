package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentplane/agentplane/internal/assets"
	"github.com/agentplane/agentplane/internal/blob"
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

// Store is what the engine reads and writes: runs and their queue, leases, frames, traces and
// spans, approvals, chat sessions, and the agents, models and tools runs use. InTx runs fn in
// one transaction whose writes commit together; fn gets the transaction as a Store.
// SQLStore adapts a *store.Store.
type Store interface {
	PromptStore
	modelhealth.Store
	InTx(ctx context.Context, fn func(tx Store) error) error
	Dialect() store.Dialect
	Notify(ctx context.Context, channel, payload string) error
	NotifyChannel(ctx context.Context) (string, error)

	AgentGet(ctx context.Context, ws, id string) (*domain.Agent, error)
	AgentVersionGet(ctx context.Context, ws, agentID, versionID string) (*domain.AgentVersion, error)
	DataSourceGet(ctx context.Context, ws, id string) (*domain.DataSource, error)
	GuardrailGet(ctx context.Context, ws, id string) (*domain.Guardrail, error)
	LLMModelGet(ctx context.Context, ws, id string) (*domain.LLMModel, error)
	MCPToolGet(ctx context.Context, ws, id string) (*domain.MCPTool, error)

	ExecutionClaim(ctx context.Context, c domain.Claim) (*domain.Execution, error)
	ExecutionCreate(ctx context.Context, e *domain.Execution, tr *domain.Trace) error
	ExecutionGet(ctx context.Context, ws, id string) (*domain.Execution, error)
	ExecutionLeasesRenew(ctx context.Context, node string, lease time.Duration) ([]domain.LeaseRenewal, error)
	ExecutionMarkModelCalled(ctx context.Context, id string, o domain.Owner) (bool, error)
	ExecutionRequeue(ctx context.Context, ws, id string, o *domain.Owner, seqUsed *int) (bool, error)
	ExecutionReserveSeqs(ctx context.Context, id string, o domain.Owner, upTo int) (bool, error)
	ExecutionTransition(ctx context.Context, ws, id, to string, p domain.ExecutionPatch) (*domain.Execution, error)
	ExecutionTree(ctx context.Context, ws, id string) (*domain.ExecutionNode, error)
	ExecutionsExpired(ctx context.Context, limit int) ([]*domain.Execution, error)

	EventAppend(ctx context.Context, executionID string, events []domain.Event) error
	EventAppendFinal(ctx context.Context, executionID string, events []domain.Event, output json.RawMessage) error
	EventLastSeq(ctx context.Context, executionID string) (int, error)
	EventList(ctx context.Context, executionID string, after int) ([]domain.Event, error)
	SpanInsert(ctx context.Context, spans []*domain.Span) error
	TraceCreate(ctx context.Context, t *domain.Trace) error
	TraceFinish(ctx context.Context, ws, id, status string, usage domain.TokenUsage, cost float64, ended domain.Time, durationMS int64) error

	ApprovalCreate(ctx context.Context, a *domain.Approval) error
	ApprovalDecide(ctx context.Context, ws, executionID string, d domain.ApprovalDecision) (*domain.Approval, error)
	ApprovalPending(ctx context.Context, ws, executionID string) (*domain.Approval, error)
	ApprovalsExpired(ctx context.Context, now domain.Time, limit int) ([]*domain.Approval, error)

	ChatHistoryTail(ctx context.Context, ws, sessionID string, fit func(*domain.ChatMessage) bool) ([]*domain.ChatMessage, int, error)
	ChatMessageAppend(ctx context.Context, ws, sessionID string, msgs ...*domain.ChatMessage) error
	ChatSessionLock(ctx context.Context, ws, id, executionID string) error
	ChatSessionUnlock(ctx context.Context, ws, id, executionID string) error
	ChatSessionUnlockFor(ctx context.Context, ws, executionID string) error
	ChatTurnClaim(ctx context.Context, ws, key, hash string, ref domain.ChatTurnRef) error
	MemoryCreate(ctx context.Context, m *domain.Memory) (*domain.Memory, error)
	MemoryMatch(ctx context.Context, ws string, sc domain.MemoryScope, text string, limit int) ([]*domain.Memory, error)
}

// SQLStore is the Store of a *store.Store: its InTx hands the callback the transaction as a
// SQLStore too (a *store.Store's InTx hands it a *store.Store).
type SQLStore struct{ *store.Store }

var _ Store = SQLStore{}

// InTx runs fn in a transaction of the store.
func (s SQLStore) InTx(ctx context.Context, fn func(tx Store) error) error {
	return s.Store.InTx(ctx, func(tx *store.Store) error { return fn(SQLStore{tx}) })
}

// SQLHook adapts a hook that writes with the store's own methods (the API's plan limits,
// idempotency and trigger claims) to the engine's BeforeCreate and BeforeDecide, whose
// transaction is a Store: the engine of a SQLStore hands it a SQLStore. nil stays nil.
func SQLHook(fn func(ctx context.Context, tx *store.Store, x *domain.Execution) error) func(ctx context.Context, tx Store, x *domain.Execution) error {
	if fn == nil {
		return nil
	}
	return func(ctx context.Context, tx Store, x *domain.Execution) error {
		s, ok := tx.(SQLStore)
		if !ok {
			return fmt.Errorf("this hook writes to a SQL store; the engine's transaction is a %T", tx)
		}
		return fn(ctx, s.Store, x)
	}
}

// memoryAssets is the assets service of an engine whose Config names none (tests): blobs in
// memory, unlimited, their rows in st when st is a SQLStore; nil otherwise.
func memoryAssets(st Store) *assets.Service {
	s, ok := st.(SQLStore)
	if !ok {
		return nil
	}
	return assets.New(s.Store, blob.NewMemory(), 0)
}
