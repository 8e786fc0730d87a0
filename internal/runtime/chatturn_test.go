package runtime

import (
	"context"
	"errors"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// TestChatTurnIdempotencyKey: a chat turn's Idempotency-Key is claimed with the turn; a second
// Submit with the key starts nothing and names the first turn, even while it still runs.
func TestChatTurnIdempotencyKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, a := fixture(t)
	e := newEngine(st)
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer stop(e)
	sess, err := st.ChatSessionCreate(ctx, &domain.ChatSession{WorkspaceID: a.WorkspaceID, AgentID: a.ID})
	if err != nil {
		t.Fatal(err)
	}
	submit := func(msgID string) (*domain.Execution, *Waiter, error) {
		return e.Submit(ctx, SubmitRequest{WorkspaceID: a.WorkspaceID, Agent: a, VersionID: a.ActiveVersionID, Config: a.Config,
			Input: map[string]any{"message": "hi"}, Source: "chat", TimeoutMS: 10_000,
			Chat: &ChatTurn{SessionID: sess.ID, UserMessageID: msgID, Content: "hi", IdempotencyKey: "k", RequestHash: "h"}})
	}
	x, run, err := submit("m1")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = submit("m2")
	var used *store.IdempotencyUsedError
	if !errors.As(err, &used) {
		t.Fatalf("second submit: %v", err)
	}
	if ref, ok := used.Record.ChatTurn(); !ok || ref.ExecutionID != x.ID || ref.UserMessageID != "m1" {
		t.Fatalf("second submit names %+v", used.Record)
	}
	<-run.Done()
	if _, _, err := submit("m3"); !errors.As(err, &used) {
		t.Fatalf("submit after the turn ended: %v", err)
	}
	msgs, _, _ := st.ChatHistoryTail(ctx, a.WorkspaceID, sess.ID, func(*domain.ChatMessage) bool { return true })
	if len(msgs) != 2 {
		t.Fatalf("%d messages, want one turn", len(msgs))
	}
	if w, ok := e.Running(x.ID); ok || w != nil {
		t.Fatal("an ended run still reads as running")
	}
}
