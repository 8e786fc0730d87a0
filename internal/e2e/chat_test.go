package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
)

// TestChatHistoryTrimmed: history that would overflow the model's context window is trimmed
// oldest-first, the trimming is recorded on the trace, and nothing is lost from the session.
func TestChatHistoryTrimmed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFixtures(t, dir, map[string]string{"llm_models.json": `[{"id":"tiny-ctx","provider":"meta","name":"Tiny context","context_window":400,
		"max_output_tokens":100,"input_price_per_million":1,"output_price_per_million":2,"capabilities":["chat"]}]`})
	p := start(t, emulatorEnv(map[string]string{"FIXTURES": dir}), "emulator")
	ctx := context.Background()
	a := mustAgent(t, p.C, "simple", client.AgentConfig{Model: "tiny-ctx", MaxTokens: client.Ptr[int64](100), SystemPrompt: "You are a patient tutor."})
	sess, _ := p.C.ChatSessionCreate(ctx, a.ID, "long talk", nil)
	var last *client.AssistantReply
	for i := range 8 {
		r, err := p.C.ChatSend(ctx, sess.ID, fmt.Sprintf("Question %d: explain photosynthesis, chlorophyll, light reactions and the Calvin cycle in detail", i))
		if err != nil {
			t.Fatal(err)
		}
		last = r
	}
	x, _ := p.C.ExecutionGet(ctx, last.ExecutionID)
	tr, err := p.C.TraceGet(ctx, x.TraceID)
	if err != nil {
		t.Fatal(err)
	}
	var dropped float64
	for _, sp := range tr.AllSpans() {
		if sp.Kind == "history" {
			dropped, _ = sp.Attributes["dropped_messages"].(float64)
		}
	}
	if dropped < 1 {
		t.Fatalf("no trimming recorded on the trace: %+v", tr.Spans)
	}
	msgs, _ := p.C.ChatMessageList(ctx, sess.ID, client.ListChatMessagesParams{Limit: 100})
	if msgs.Pagination.Total != 16 {
		t.Fatalf("session lost messages: %d", msgs.Pagination.Total)
	}
	if client.Val(x.TokenUsage.PromptTokens) > 400 {
		t.Fatalf("prompt of %d tokens exceeds the 400-token window", x.TokenUsage.PromptTokens)
	}
}

// TestStreamDisconnectDoesNotCancel: a client leaving a stream leaves the run going.
func TestStreamDisconnectDoesNotCancel(t *testing.T) {
	t.Parallel()
	p := start(t, emulatorEnv(nil), "emulator")
	ctx := context.Background()
	a := mustAgent(t, p.C, "simple", client.AgentConfig{Simulation: client.Simulation{LatencyMs: client.Ptr[int64](5)}})
	sess, _ := p.C.ChatSessionCreate(ctx, a.ID, "", nil)
	s, err := p.C.ChatStream(ctx, sess.ID, "tell me about the weather in spring")
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := s.Next()
	s.Close()
	var id struct {
		ExecutionID string `json:"execution_id"`
	}
	decode(t, []byte(first.Data), &id)
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	x, err := p.C.Wait(cctx, id.ExecutionID, 10*time.Millisecond, false)
	if err != nil || x.Status != "completed" {
		t.Fatalf("after the client left: %+v %v", x, err)
	}
	msgs, _ := p.C.ChatMessageList(ctx, sess.ID, client.ListChatMessagesParams{})
	if msgs.Pagination.Total != 2 {
		t.Fatalf("reply not stored after the client left: %d messages", msgs.Pagination.Total)
	}
}
