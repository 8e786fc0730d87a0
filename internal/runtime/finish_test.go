package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// TestFinishWriteRefused: when the final write of a run is refused (here its chat turn reuses
// a message id; on PostgreSQL a chat message holding NUL was one way), the run still ends: failed with a
// message, one terminal error frame stored and published, its trace ended and its chat
// session released, instead of staying running until a restart.
func TestFinishWriteRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, a := fixture(t)
	e := newEngine(st)
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer stop(e)
	sess, err := st.ChatSessionCreate(ctx, &domain.ChatSession{WorkspaceID: a.WorkspaceID, AgentID: a.ID, Metadata: domain.JSONObject{}})
	if err != nil {
		t.Fatal(err)
	}
	c := e.claim()
	x := &domain.Execution{WorkspaceID: a.WorkspaceID, AgentID: a.ID, AgentVersionID: a.ActiveVersionID, Source: "chat",
		Status: domain.StatusRunning, Input: domain.JSONObject{"message": "hi"}, Metadata: domain.JSONObject{}, TimeoutMS: 1000, Claim: &c}
	if err := st.ExecutionCreate(ctx, x, &domain.Trace{WorkspaceID: a.WorkspaceID, Name: "A"}); err != nil {
		t.Fatal(err)
	}
	if err := st.ChatSessionLock(ctx, a.WorkspaceID, sess.ID, x.ID); err != nil {
		t.Fatal(err)
	}

	taken := &domain.ChatMessage{ID: store.NewID(), Role: "user", Content: "earlier"}
	if err := st.ChatMessageAppend(ctx, a.WorkspaceID, sess.ID, taken); err != nil {
		t.Fatal(err)
	}
	r := &run{e: e, x: x, state: &runState{Chat: &chatState{SessionID: sess.ID, UserMessageID: taken.ID, Content: "hi"}},
		owner: domain.Owner{Node: e.node, Attempt: x.Attempt}, reserved: x.SeqReserved, stop: func(error) {}}
	r.topic = e.hub.open(x.WorkspaceID, x.ID, 0)
	defer e.hub.close(x.ID, r.topic)
	sub, live := e.hub.Subscribe(x.ID)
	if !live {
		t.Fatal("no live topic")
	}
	defer sub.Close()
	r.emitText("content", "partial reply")

	final, err := r.finish(outcome{status: domain.StatusCompleted, output: []byte(`{"content":"done"}`)})
	if err != nil {
		t.Fatalf("finish: %v", err)
	}
	if final.Status != domain.StatusFailed || final.Error == nil || !strings.Contains(*final.Error, "could not be stored") {
		t.Fatalf("execution: %+v", final)
	}
	got, _ := st.ExecutionGet(ctx, a.WorkspaceID, x.ID)
	if got.Status != domain.StatusFailed || got.CompletedAt == nil {
		t.Fatalf("stored execution: %+v", got)
	}
	evs, _ := st.EventList(ctx, x.ID, 0)
	if n := len(evs); n == 0 || evs[n-1].Event != "error" || evs[n-1].Seq != 2 {
		t.Fatalf("stored frames: %+v", evs)
	}
	frames, _ := sub.Next(0)
	if n := len(frames); n != 2 || frames[0].Event != "content" || frames[1].Event != "error" || frames[1].Seq != 2 {
		t.Fatalf("published frames: %+v", frames)
	}
	s, _ := st.ChatSessionGet(ctx, a.WorkspaceID, sess.ID)
	if s.ActiveExecutionID != nil || s.MessageCount != 1 {
		t.Fatalf("session still locked or holds the refused turn: %+v", s)
	}
	tr, err := st.TraceGet(ctx, a.WorkspaceID, x.TraceID)
	if err != nil || tr.Status != domain.StatusFailed {
		t.Fatalf("trace: %+v %v", tr, err)
	}
}
