package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
)

func TestExecutionLedger(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		mustModel(t, s)
		ws := mustWorkspace(t, s, "a")
		a, err := s.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: "A", Type: "simple", Status: "active"}, &domain.AgentConfig{Model: "gpt-4o"}, "")
		if err != nil {
			t.Fatal(err)
		}
		x := &domain.Execution{WorkspaceID: ws, AgentID: a.ID, AgentVersionID: a.ActiveVersionID, Source: "api", Status: domain.StatusPending,
			Input: domain.JSONObject{"q": "hi"}, Metadata: domain.JSONObject{}, TimeoutMS: 1000, State: json.RawMessage(`{"phase":""}`)}
		tr := &domain.Trace{WorkspaceID: ws, AgentID: &a.ID, Name: "A"}
		if err := s.ExecutionCreate(ctx, x, tr); err != nil {
			t.Fatal(err)
		}
		claimed, err := s.ExecutionClaim(ctx, testClaim)
		if err != nil || claimed == nil || claimed.ID != x.ID || claimed.Status != domain.StatusRunning || claimed.StartedAt == nil {
			t.Fatalf("claim: %+v %v", claimed, err)
		}
		if again, err := s.ExecutionClaim(ctx, testClaim); err != nil || again != nil {
			t.Fatalf("second claim: %+v %v", again, err)
		}
		_, err = s.ExecutionTransition(ctx, ws, x.ID, domain.StatusRejected, domain.ExecutionPatch{})
		var te *TransitionError
		if !errors.As(err, &te) || te.From != domain.StatusRunning || te.To != domain.StatusRejected {
			t.Fatalf("illegal move: %v", err)
		}
		if err := s.EventAppend(ctx, x.ID, []domain.Event{{Seq: 1, Event: "content", Data: json.RawMessage(`{"content":"a"}`)},
			{Seq: 2, Event: "content", Data: json.RawMessage(`{"content":"b"}`)}}); err != nil {
			t.Fatal(err)
		}
		out := json.RawMessage(`{"content":"ab"}`)
		done, err := s.ExecutionTransition(ctx, ws, x.ID, domain.StatusCompleted, domain.ExecutionPatch{Output: out, Usage: &domain.TokenUsage{PromptTokens: 3, CompletionTokens: 2}, ClearState: true})
		if err != nil || done.Status != domain.StatusCompleted || string(done.Output) != string(out) || done.TokenUsage.TotalTokens != 5 || done.State != nil {
			t.Fatalf("complete: %+v %v", done, err)
		}
		if err := s.EventAppend(ctx, x.ID, []domain.Event{{Seq: 3, Event: "done", Data: json.RawMessage(`{}`)}}); err != nil {
			t.Fatal(err)
		}
		evs, err := s.EventList(ctx, x.ID, 1)
		if err != nil || len(evs) != 2 || evs[0].Seq != 2 || evs[1].Event != "done" {
			t.Fatalf("events after 1: %+v %v", evs, err)
		}
		if n, _ := s.EventLastSeq(ctx, x.ID); n != 3 {
			t.Fatalf("last seq %d", n)
		}
		if err := s.SpanInsert(ctx, []*domain.Span{{TraceID: tr.ID, WorkspaceID: ws, Name: "llm", Kind: "llm", Status: "ok", StartedAt: domain.Now(), Attributes: domain.JSONObject{}}}); err != nil {
			t.Fatal(err)
		}
		got, err := s.TraceGet(ctx, ws, tr.ID)
		if err != nil || len(got.Spans) != 1 || got.Spans[0].Kind != "llm" {
			t.Fatalf("trace: %+v %v", got, err)
		}
		if _, err := s.TraceGet(ctx, mustWorkspace(t, s, "b"), tr.ID); !IsNotFound(err) {
			t.Fatalf("trace across workspaces: %v", err)
		}
		l, n, err := s.ExecutionList(ctx, ws, domain.ExecutionFilter{Status: domain.StatusCompleted, AgentID: a.ID}, domain.Page{Page: 1, Limit: 10})
		if err != nil || n != 1 || len(l) != 1 {
			t.Fatalf("list: %d %v", n, err)
		}
		// Approvals.
		ap := &domain.Approval{WorkspaceID: ws, ExecutionID: x.ID, AgentID: a.ID, Checkpoint: "c", Awaiting: json.RawMessage(`{"draft_output":"x"}`)}
		if err := s.ApprovalCreate(ctx, ap); err != nil {
			t.Fatal(err)
		}
		decided, err := s.ApprovalDecide(ctx, ws, x.ID, domain.ApprovalDecision{Status: "approved", Comment: "fine", DecidedBy: "api_key:k1"})
		if err != nil || decided.Status != "approved" || decided.AgentName != "A" || decided.DecidedAt == nil ||
			decided.Kind != domain.ApprovalCheckpoint || decided.DecidedBy != "api_key:k1" || len(decided.Calls) != 0 {
			t.Fatalf("decide: %+v %v", decided, err)
		}
		if again, _ := s.ApprovalDecide(ctx, ws, x.ID, domain.ApprovalDecision{Status: "denied"}); again != nil {
			t.Fatal("an approval was decided twice")
		}
		testToolApprovals(t, s, ws, a.ID, x.ID)
	})
}

// testToolApprovals: a tools approval keeps its pending calls, then their decisions with the
// original and edited arguments; one that expires is listed by the sweep until decided.
func testToolApprovals(t *testing.T, s *Store, ws, agentID, execID string) {
	ctx := context.Background()
	past := domain.TimeFromMillis(domain.Now().UnixMilli() - 1000)
	calls := []domain.PendingCall{{CallID: "c1", Name: "crm__delete_contact", Arguments: json.RawMessage(`{"id":7}`), InputSchema: json.RawMessage(`{"type":"object"}`)}}
	ap := &domain.Approval{WorkspaceID: ws, ExecutionID: execID, AgentID: agentID, Kind: domain.ApprovalTools, Checkpoint: "tools", Awaiting: json.RawMessage(`{}`),
		Calls: calls, ExpiresAt: &past, OnTimeout: "reject"}
	if err := s.ApprovalCreate(ctx, ap); err != nil {
		t.Fatal(err)
	}
	pending, err := s.ApprovalPending(ctx, ws, execID)
	if err != nil || pending == nil || pending.ID != ap.ID || len(pending.Calls) != 1 || string(pending.Calls[0].Arguments) != `{"id":7}` ||
		pending.ExpiresAt == nil || pending.OnTimeout != "reject" {
		t.Fatalf("pending: %+v %v", pending, err)
	}
	expired, err := s.ApprovalsExpired(ctx, domain.Now(), 10)
	if err != nil || len(expired) != 1 || expired[0].ID != ap.ID {
		t.Fatalf("expired: %+v %v", expired, err)
	}
	calls[0].Decision, calls[0].EditedArguments = "edit", json.RawMessage(`{"id":8}`)
	decided, err := s.ApprovalDecide(ctx, ws, execID, domain.ApprovalDecision{Status: "approved", DecidedBy: "user:u1", Calls: calls})
	if err != nil || decided.Calls[0].Decision != "edit" || string(decided.Calls[0].Arguments) != `{"id":7}` ||
		string(decided.Calls[0].EditedArguments) != `{"id":8}` || decided.DecidedBy != "user:u1" {
		t.Fatalf("decided: %+v %v", decided, err)
	}
	if expired, _ := s.ApprovalsExpired(ctx, domain.Now(), 10); len(expired) != 0 {
		t.Fatalf("a decided approval expires: %+v", expired)
	}
	q := &domain.Approval{WorkspaceID: ws, ExecutionID: execID, AgentID: agentID, Kind: domain.ApprovalQuestion, Checkpoint: "ask_user", Awaiting: json.RawMessage(`{}`),
		Question: "Which size?", Choices: []string{"S", "M"}}
	if err := s.ApprovalCreate(ctx, q); err != nil {
		t.Fatal(err)
	}
	answered, err := s.ApprovalDecide(ctx, ws, execID, domain.ApprovalDecision{Status: "approved", Answer: "M", DecidedBy: "chat"})
	if err != nil || answered.Question != "Which size?" || strings.Join(answered.Choices, ",") != "S,M" || answered.Answer != "M" || answered.ExpiresAt != nil {
		t.Fatalf("answered: %+v %v", answered, err)
	}
}

func TestChatSessions(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		mustModel(t, s)
		ws := mustWorkspace(t, s, "a")
		a, _ := s.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: "A", Type: "simple", Status: "active"}, &domain.AgentConfig{Model: "gpt-4o"}, "")
		c, err := s.ChatSessionCreate(ctx, &domain.ChatSession{WorkspaceID: ws, AgentID: a.ID, Title: "t", Metadata: domain.JSONObject{}})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.ChatSessionLock(ctx, ws, c.ID, "x1"); err != nil {
			t.Fatal(err)
		}
		var ce *ConflictError
		if err := s.ChatSessionLock(ctx, ws, c.ID, "x2"); !errors.As(err, &ce) {
			t.Fatalf("second lock: %v", err)
		}
		if _, err := s.ChatSessionDelete(ctx, ws, c.ID); !errors.As(err, &ce) {
			t.Fatalf("delete while busy: %v", err)
		}
		x1 := "x1"
		if err := s.ChatMessageAppend(ctx, ws, c.ID, &domain.ChatMessage{Role: "user", Content: "hi", ExecutionID: &x1},
			&domain.ChatMessage{Role: "assistant", Content: "hello", ExecutionID: &x1}); err != nil {
			t.Fatal(err)
		}
		if err := s.ChatSessionUnlock(ctx, ws, c.ID, "x1"); err != nil {
			t.Fatal(err)
		}
		h, _, err := s.ChatHistoryTail(ctx, ws, c.ID, keepAll)
		if err != nil || len(h) != 2 || h[0].Role != "user" || h[1].Content != "hello" {
			t.Fatalf("history: %+v %v", h, err)
		}
		r, err := s.ChatReplyOf(ctx, ws, "x1")
		if err != nil || r.Content != "hello" {
			t.Fatalf("reply: %+v %v", r, err)
		}
		got, _ := s.ChatSessionGet(ctx, ws, c.ID)
		if got.MessageCount != 2 || got.LastMessageAt == nil || got.ActiveExecutionID != nil {
			t.Fatalf("session: %+v", got)
		}
		if _, err := s.ChatSessionDelete(ctx, ws, c.ID); err != nil {
			t.Fatal(err)
		}
		if h, _, _ := s.ChatHistoryTail(ctx, ws, c.ID, keepAll); len(h) != 0 {
			t.Fatal("messages outlived their session")
		}
	})
}

// TestExecutionTransitionFrom: a move decided on a read of one status does not land on an
// execution that has moved meanwhile (a cancel of a pending run racing a worker's claim).
func TestExecutionTransitionFrom(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		mustModel(t, s)
		ws := mustWorkspace(t, s, "a")
		a, err := s.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: "A", Type: "simple", Status: "active"}, &domain.AgentConfig{Model: "gpt-4o"}, "")
		if err != nil {
			t.Fatal(err)
		}
		x := &domain.Execution{WorkspaceID: ws, AgentID: a.ID, AgentVersionID: a.ActiveVersionID, Source: "api", Status: domain.StatusPending,
			Input: domain.JSONObject{}, Metadata: domain.JSONObject{}, TimeoutMS: 1000}
		if err := s.ExecutionCreate(ctx, x, &domain.Trace{WorkspaceID: ws, Name: "A"}); err != nil {
			t.Fatal(err)
		}
		if c, err := s.ExecutionClaim(ctx, testClaim); err != nil || c == nil {
			t.Fatalf("claim: %v", err)
		}
		_, err = s.ExecutionTransition(ctx, ws, x.ID, domain.StatusCancelled, domain.ExecutionPatch{From: domain.StatusPending})
		var te *TransitionError
		if !errors.As(err, &te) || te.From != domain.StatusRunning {
			t.Fatalf("cancel of a claimed run read as pending: %v", err)
		}
		if _, err := s.ExecutionTransition(ctx, ws, x.ID, domain.StatusCancelled, domain.ExecutionPatch{From: domain.StatusCompleted}); !errors.As(err, &te) {
			t.Fatalf("impossible move: %v", err)
		}
		got, err := s.ExecutionTransition(ctx, ws, x.ID, domain.StatusCancelled, domain.ExecutionPatch{From: domain.StatusRunning})
		if err != nil || got.Status != domain.StatusCancelled {
			t.Fatalf("cancel from running: %+v %v", got, err)
		}
	})
}

func keepAll(*domain.ChatMessage) bool { return true }

// TestChatHistoryTail: a turn reads only the newest messages that fit, across read batches,
// oldest first, and learns how many older ones it left out without reading them.
func TestChatHistoryTail(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		mustModel(t, s)
		ws := mustWorkspace(t, s, "a")
		a, _ := s.AgentCreate(ctx, &domain.Agent{WorkspaceID: ws, Name: "A", Type: "simple", Status: "active"}, &domain.AgentConfig{Model: "gpt-4o"}, "")
		c, err := s.ChatSessionCreate(ctx, &domain.ChatSession{WorkspaceID: ws, AgentID: a.ID, Metadata: domain.JSONObject{}})
		if err != nil {
			t.Fatal(err)
		}
		const total, keep = 250, 130
		msgs := make([]*domain.ChatMessage, total)
		for i := range msgs {
			msgs[i] = &domain.ChatMessage{Role: "user", Content: fmt.Sprintf("m%d", i+1)}
		}
		if err := s.ChatMessageAppend(ctx, ws, c.ID, msgs...); err != nil {
			t.Fatal(err)
		}
		seen := 0
		h, dropped, err := s.ChatHistoryTail(ctx, ws, c.ID, func(*domain.ChatMessage) bool { seen++; return seen <= keep })
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != keep || dropped != total-keep || seen != keep+1 {
			t.Fatalf("kept %d, dropped %d, offered %d; want %d, %d, %d", len(h), dropped, seen, keep, total-keep, keep+1)
		}
		if h[0].Content != fmt.Sprintf("m%d", total-keep+1) || h[keep-1].Content != fmt.Sprintf("m%d", total) {
			t.Fatalf("kept %s … %s, want the newest %d oldest first", h[0].Content, h[keep-1].Content, keep)
		}
		if h, dropped, _ := s.ChatHistoryTail(ctx, ws, c.ID, keepAll); len(h) != total || dropped != 0 || h[0].Content != "m1" {
			t.Fatalf("whole history: %d messages, %d dropped", len(h), dropped)
		}
	})
}
