package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
)

// TestChatRetriesEndToEnd runs the retry behaviour of chat turns on the emulator and on
// `serve` (SQLite, and PostgreSQL when TEST_DATABASE_URL is set).
func TestChatRetriesEndToEnd(t *testing.T) {
	t.Parallel()
	for name, p := range targets(t) {
		t.Run(name, func(t *testing.T) { chatRetrySuite(t, p.C) })
	}
}

func chatRetrySuite(t *testing.T, c *client.Client) {
	ctx := context.Background()
	slow := mustAgent(t, c, "simple", client.AgentConfig{Simulation: client.Simulation{LatencyMs: client.Ptr[int64](15)}})

	t.Run("stream cut and retried", func(t *testing.T) {
		// What fetch-event-source does: the stream breaks mid-turn, and the POST is sent again
		// with the same body, key and the last frame id seen.
		sess, _ := c.ChatSessionCreate(ctx, slow.ID, "", nil)
		const text = "Tell me about the tides and the moon"
		key := client.WithIdempotencyKey("turn-" + sess.ID)
		s, err := c.ChatStream(ctx, sess.ID, text, key)
		if err != nil {
			t.Fatal(err)
		}
		var seen []client.StreamEvent
		for len(seen) < 4 {
			ev, ok, err := s.Next()
			if err != nil || !ok {
				t.Fatalf("first stream: %v %v", ok, err)
			}
			if ev.Terminal() {
				t.Fatal("the turn ended before the cut: make it slower")
			}
			seen = append(seen, ev)
		}
		s.Close() // the cut
		var first struct {
			ExecutionID   string `json:"execution_id"`
			UserMessageID string `json:"user_message_id"`
		}
		decode(t, []byte(seen[0].Data), &first)
		last := seen[len(seen)-1].ID

		s, err = c.ChatStream(ctx, sess.ID, text, key, client.WithLastEventID(last))
		if err != nil {
			t.Fatalf("retry: %v", err)
		}
		rest, err := s.Collect()
		if err != nil {
			t.Fatal(err)
		}
		checkFrames(t, rest, last+1)
		all := append(seen[1:], rest...)
		checkFrames(t, all, 1)

		// A retry with no Last-Event-ID replays the whole turn, execution frame first.
		s, err = c.ChatStream(ctx, sess.ID, text, key)
		if err != nil {
			t.Fatal(err)
		}
		replay, err := s.Collect()
		if err != nil || replay[0].Event != "execution" || replay[0].Data != seen[0].Data {
			t.Fatalf("full replay: %+v %v", replay, err)
		}
		checkFrames(t, replay[1:], 1)
		for i, ev := range replay[1:] {
			if ev != all[i] {
				t.Fatalf("replayed frame %d differs: %+v vs %+v", i, ev, all[i])
			}
		}

		// Past the terminal frame there is nothing more: 204, and EventSource stops.
		end := all[len(all)-1].ID
		s, err = c.ChatStream(ctx, sess.ID, text, key, client.WithLastEventID(end))
		if err != nil || !s.Ended() {
			t.Fatalf("retry past the end: %v", err)
		}
		s.Close()
		s, err = c.ExecutionStream(ctx, first.ExecutionID, end)
		if err != nil || !s.Ended() {
			t.Fatalf("execution stream past the end: %v", err)
		}
		s.Close()

		msgs, err := c.ChatMessageList(ctx, sess.ID, client.ListChatMessagesParams{})
		if err != nil || msgs.Pagination.Total != 2 || msgs.Data[0].Role != "user" || msgs.Data[1].Role != "assistant" ||
			msgs.Data[0].ID != first.UserMessageID || msgs.Data[1].ExecutionID != first.ExecutionID {
			t.Fatalf("after a cut and retries: %+v %v", msgs, err)
		}
		var done struct{ Output struct{ Content string } }
		decode(t, []byte(all[len(all)-1].Data), &done)
		if done.Output.Content != msgs.Data[1].Content {
			t.Fatalf("streamed reply %q, stored %q", done.Output.Content, msgs.Data[1].Content)
		}
		_, err = c.ChatStream(ctx, sess.ID, "another text", key)
		apiErr(t, err, 409)
	})

	t.Run("plain form replayed", func(t *testing.T) {
		sess, _ := c.ChatSessionCreate(ctx, slow.ID, "", nil)
		key := client.WithIdempotencyKey("send-" + sess.ID)
		// The client gives up while the reply is being written, then retries.
		cut, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		_, err := c.ChatSend(cut, sess.ID, "What is the boiling point of water?", key)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("first send should have been cut: %v", err)
		}
		r1, err := c.ChatSend(ctx, sess.ID, "What is the boiling point of water?", key)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := c.ChatSend(ctx, sess.ID, "What is the boiling point of water?", key)
		if err != nil || !reflect.DeepEqual(r2, r1) {
			t.Fatalf("replay: %+v %v, first %+v", r2, err, r1)
		}
		_, err = c.ChatSend(ctx, sess.ID, "And of milk?", key)
		if ae := apiErr(t, err, 409); !strings.Contains(ae.Message, "Idempotency-Key") {
			t.Fatalf("409 message: %s", ae.Message)
		}
		msgs, _ := c.ChatMessageList(ctx, sess.ID, client.ListChatMessagesParams{})
		if msgs.Pagination.Total != 2 {
			t.Fatalf("%d messages after a cut and two retries, want 2", msgs.Pagination.Total)
		}
	})

	t.Run("terminal error codes", func(t *testing.T) {
		code := func(evs []client.StreamEvent) (string, string) {
			t.Helper()
			if len(evs) == 0 {
				t.Fatal("no frames")
			}
			last := evs[len(evs)-1]
			var d struct{ Message, Code string }
			_ = json.Unmarshal([]byte(last.Data), &d)
			if last.Event != "error" || d.Message == "" || d.Code != last.ErrorCode() {
				t.Fatalf("terminal frame: %+v", last)
			}
			return d.Code, d.Message
		}
		broken := mustAgent(t, c, "simple", client.AgentConfig{Simulation: client.Simulation{Fail: client.FailAlways(), FailMessage: "the model fell over"}})
		sess, _ := c.ChatSessionCreate(ctx, broken.ID, "", nil)
		s, err := c.ChatStream(ctx, sess.ID, "hello")
		if err != nil {
			t.Fatal(err)
		}
		evs, err := s.Collect()
		if err != nil {
			t.Fatal(err)
		}
		if got, msg := code(evs); got != "failed" || !strings.Contains(msg, "fell over") {
			t.Fatalf("failed run: %s %s", got, msg)
		}

		timeout := mustAgent(t, c, "simple", client.AgentConfig{RequestTimeoutMs: 30, Simulation: client.Simulation{LatencyMs: client.Ptr[int64](200)}})
		sess, _ = c.ChatSessionCreate(ctx, timeout.ID, "", nil)
		s, err = c.ChatStream(ctx, sess.ID, "hello")
		if err != nil {
			t.Fatal(err)
		}
		if evs, err = s.Collect(); err != nil {
			t.Fatal(err)
		}
		if got, msg := code(evs); got != "timeout" || !strings.Contains(msg, "request_timeout_ms") {
			t.Fatalf("timed-out run: %s %s", got, msg)
		}

		x, err := c.Execute(ctx, slow.ID, client.ExecuteRequest{Input: map[string]any{"message": "cancel me"}, Async: client.Ptr(true)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.ExecutionCancel(ctx, x.ID); err != nil {
			t.Fatal(err)
		}
		s, _ = c.ExecutionStream(ctx, x.ID, -1)
		if evs, err = s.Collect(); err != nil {
			t.Fatal(err)
		}
		if got, _ := code(evs); got != "cancelled" {
			t.Fatalf("cancelled run: %s", got)
		}

		gate := mustAgent(t, c, "approval", client.AgentConfig{Approval: client.ApprovalConfig{
			Checkpoints: []client.Checkpoint{{Name: "review", When: "before_output"}}}})
		x, err = c.Execute(ctx, gate.ID, client.ExecuteRequest{Input: map[string]any{"message": "refund 40"}})
		if err != nil || x.Status != "awaiting_approval" {
			t.Fatalf("approval run: %+v %v", x, err)
		}
		if _, err := c.ExecutionDeny(ctx, x.ID, "not today"); err != nil {
			t.Fatal(err)
		}
		s, _ = c.ExecutionStream(ctx, x.ID, -1)
		if evs, err = s.Collect(); err != nil {
			t.Fatal(err)
		}
		if got, _ := code(evs); got != "rejected" {
			t.Fatalf("denied run: %s", got)
		}
	})
}
