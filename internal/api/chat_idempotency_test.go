package api

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
)

// TestChatIdempotencyRoutes: a chat message with an Idempotency-Key makes one turn; a retry
// replays the reply (plain form) or the turn's frames (stream form, after Last-Event-ID), a
// resume past the terminal frame is a 204, and the key with another request is a 409.
func TestChatIdempotencyRoutes(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	a, _ := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Chatty", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini"}})
	s1, _ := e.c.ChatSessionCreate(ctx, a.ID, "one", nil)
	s2, _ := e.c.ChatSessionCreate(ctx, a.ID, "two", nil)
	sess := "/api/v1/chat/sessions/" + s1.ID
	var reply, turn string
	key := func(k string) map[string]string { return map[string]string{"Idempotency-Key": k} }
	e.run([]scenario{
		{name: "send", method: "POST", path: sess + "/messages", body: `{"content":"What are your hours?"}`, header: key("send-1"), status: 200,
			check: func(t *testing.T, b map[string]any) { reply = lookup(b, "data.id").(string) }},
		{name: "send replay", method: "POST", path: sess + "/messages", body: `{"content":"What are your hours?"}`, header: key("send-1"), status: 200,
			check: func(t *testing.T, b map[string]any) {
				if lookup(b, "data.id") != reply {
					t.Fatalf("replay answered reply %v, first %s", lookup(b, "data.id"), reply)
				}
			}},
		{name: "send other body", method: "POST", path: sess + "/messages", body: `{"content":"Something else"}`, header: key("send-1"), status: 409,
			code: "conflict", message: "send-1"},
		{name: "send other session", method: "POST", path: "/api/v1/chat/sessions/" + s2.ID + "/messages", body: `{"content":"What are your hours?"}`,
			header: key("send-1"), status: 409, message: "send-1"},
		{name: "send key on the stream route", method: "POST", path: sess + "/messages/stream", body: `{"content":"What are your hours?"}`,
			header: key("send-1"), status: 409, message: "send-1"},
		{name: "send bad key", method: "POST", path: sess + "/messages", body: `{"content":"x"}`, header: key(longText(256)), status: 400, message: "Idempotency-Key"},
		{name: "send refused keeps the key free", method: "POST", path: sess + "/messages", body: `{"content":"  "}`, header: key("send-2"), status: 422},
		{name: "send refused retried", method: "POST", path: sess + "/messages", body: `{"content":"  "}`, header: key("send-2"), status: 422},
		{name: "stream", method: "POST", path: sess + "/messages/stream", body: `{"content":"And on Sunday?"}`, header: key("stream-1"), status: 200, sse: true},
		{name: "two turns so far", method: "GET", path: sess + "/messages", status: 200, fields: map[string]any{"pagination.total": 4},
			check: func(t *testing.T, b map[string]any) { turn = lookup(b, "data.3.execution_id").(string) }},
	})
	last, err := e.store.EventLastSeq(ctx, turn)
	if err != nil || last < 2 {
		t.Fatalf("terminal frame: %d %v", last, err)
	}
	resume := func(k string, id int) map[string]string {
		return map[string]string{"Idempotency-Key": k, "Last-Event-ID": strconv.Itoa(id)}
	}
	stream := "/api/v1/executions/" + turn + "/stream"
	e.run([]scenario{
		{name: "stream replay", method: "POST", path: sess + "/messages/stream", body: `{"content":"And on Sunday?"}`, header: key("stream-1"), status: 200, sse: true},
		{name: "stream resume", method: "POST", path: sess + "/messages/stream", body: `{"content":"And on Sunday?"}`, header: resume("stream-1", last-1), status: 200, sse: true},
		{name: "stream resume at the end", method: "POST", path: sess + "/messages/stream", body: `{"content":"And on Sunday?"}`, header: resume("stream-1", last), status: 204},
		{name: "stream resume past the end", method: "POST", path: sess + "/messages/stream?last_event_id=" + strconv.Itoa(last+5), body: `{"content":"And on Sunday?"}`,
			header: key("stream-1"), status: 204},
		{name: "stream resume bad id", method: "POST", path: sess + "/messages/stream", body: `{"content":"And on Sunday?"}`,
			header: map[string]string{"Idempotency-Key": "stream-1", "Last-Event-ID": "soon"}, status: 400, message: "Last-Event-ID"},
		{name: "stream other body", method: "POST", path: sess + "/messages/stream", body: `{"content":"Other"}`, header: key("stream-1"), status: 409, message: "stream-1"},
		{name: "still two turns", method: "GET", path: sess + "/messages", status: 200, fields: map[string]any{"pagination.total": 4}},
		{name: "execution stream at the end", method: "GET", path: stream, header: map[string]string{"Last-Event-ID": strconv.Itoa(last)}, status: 204},
		{name: "execution stream past the end", method: "GET", path: stream + "?last_event_id=" + strconv.Itoa(last+1), status: 204},
		{name: "execution stream before the end", method: "GET", path: stream, header: map[string]string{"Last-Event-ID": strconv.Itoa(last - 1)}, status: 200, sse: true},
	})

	// The SDK: a resumed stream's frames are exactly those after Last-Event-ID; past the end it is Ended.
	st, err := e.c.ChatStream(ctx, s1.ID, "And on Sunday?", client.WithIdempotencyKey("stream-1"), client.WithLastEventID(last-1))
	if err != nil {
		t.Fatal(err)
	}
	evs, err := st.Collect()
	if err != nil || len(evs) != 1 || evs[0].ID != last || !evs[0].Terminal() {
		t.Fatalf("resumed frames: %+v %v", evs, err)
	}
	st, err = e.c.ExecutionStream(ctx, turn, last)
	if err != nil || !st.Ended() {
		t.Fatalf("stream past the end: %v", err)
	}
	if evs, err := st.Collect(); err != nil || len(evs) != 0 {
		t.Fatalf("ended stream yielded %+v %v", evs, err)
	}
}

// TestChatRetryOfARunningTurn: retries of a turn still running (at once, and concurrently)
// wait for that turn and answer its reply; they never meet the busy session's 409, which a
// message with another key does meet. The session ends with one user message and one reply.
func TestChatRetryOfARunningTurn(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	a, _ := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Slow", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini",
		Simulation: client.Simulation{LatencyMs: client.Ptr[int64](10)}}})
	sess, _ := e.c.ChatSessionCreate(ctx, a.ID, "", nil)
	key := client.WithIdempotencyKey("retry-me")
	const n = 12
	replies := make([]*client.AssistantReply, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	ready := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-ready
			if i >= n/2 {
				time.Sleep(time.Duration(i) * 5 * time.Millisecond) // half at once, half while it runs
			}
			replies[i], errs[i] = e.c.ChatSend(ctx, sess.ID, "Tell me a long story about the sea", key)
		})
	}
	close(ready)
	time.Sleep(60 * time.Millisecond)
	_, busy := e.c.ChatSend(ctx, sess.ID, "another question", client.WithIdempotencyKey("other"))
	wg.Wait()
	var ae *client.Error
	if !errors.As(busy, &ae) || ae.Status != 409 {
		t.Fatalf("another message while the turn runs: %v", busy)
	}
	for i := range n {
		if errs[i] != nil || replies[i].ID != replies[0].ID || replies[i].UserMessageID != replies[0].UserMessageID {
			t.Fatalf("retry %d: %+v %v (first %+v)", i, replies[i], errs[i], replies[0])
		}
	}
	msgs, err := e.c.ChatMessageList(ctx, sess.ID, client.ListChatMessagesParams{})
	if err != nil || msgs.Pagination.Total != 2 {
		t.Fatalf("messages: %+v %v", msgs, err)
	}
	// The "other" key was refused with its turn, so it is free for a real message now.
	if _, err := e.c.ChatSend(ctx, sess.ID, "another question", client.WithIdempotencyKey("other")); err != nil {
		t.Fatal(err)
	}
}

// TestChatReplayOfAFailedTurn: the plain form replays a failed turn's 502 as it was.
func TestChatReplayOfAFailedTurn(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	a, _ := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Broken", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini",
		Simulation: client.Simulation{Fail: client.FailAlways(), FailMessage: "upstream broke"}}})
	sess, _ := e.c.ChatSessionCreate(ctx, a.ID, "", nil)
	sessPath := "/api/v1/chat/sessions/" + sess.ID + "/messages"
	var first string
	e.run([]scenario{
		{name: "failed", method: "POST", path: sessPath, body: `{"content":"hi"}`, header: map[string]string{"Idempotency-Key": "f"}, status: 502,
			code: "execution_failed", check: func(t *testing.T, b map[string]any) { first = b["message"].(string) }},
		{name: "failed replay", method: "POST", path: sessPath, body: `{"content":"hi"}`, header: map[string]string{"Idempotency-Key": "f"}, status: 502,
			check: func(t *testing.T, b map[string]any) {
				if b["message"] != first {
					t.Fatalf("replay %q, first %q", b["message"], first)
				}
			}},
	})
}
