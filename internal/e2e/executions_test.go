package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
)

// targets boots each way a user runs agentplane: the emulator and `serve` on SQLite.
func targets(t *testing.T) map[string]*proc {
	out := map[string]*proc{
		"emulator": start(t, emulatorEnv(nil), "emulator"),
		"serve":    start(t, serveEnv(dataDir(t)), "serve"),
	}
	if pg := postgresURL(t); pg != "" {
		env := serveEnv(t.TempDir())
		env["DATABASE_URL"] = pg
		out["serve-postgres"] = start(t, env, "serve")
	}
	return out
}

// serveEnv is the environment of a `serve` on a data directory. Its models are simulated:
// these suites test the engine, the API and auth on every server; providers_test.go runs
// `serve` on real models (fake provider servers speaking the real wire formats).
func serveEnv(dir string) map[string]string {
	return map[string]string{"HOST": "127.0.0.1", "PORT": "0", "DATA_DIR": dir, "LOG_LEVEL": "warn", "SHUTDOWN_TIMEOUT": "200ms", "MODELS": "simulated"}
}

func mustAgent(t *testing.T, c *client.Client, typ string, cfg client.AgentConfig) *client.Agent {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = "gpt-4o-mini"
	}
	a, err := c.AgentCreate(context.Background(), client.AgentCreateRequest{Name: "Test " + typ, Type: client.AgentCreateRequestType(typ), Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func apiErr(t *testing.T, err error, status int) *client.Error {
	t.Helper()
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != status {
		t.Fatalf("want HTTP %d, got %v", status, err)
	}
	return ae
}

func TestExecutionsEndToEnd(t *testing.T) {
	t.Parallel()
	for name, p := range targets(t) {
		t.Run(name, func(t *testing.T) { executionSuite(t, p.C) })
	}
}

func executionSuite(t *testing.T, c *client.Client) {
	ctx := context.Background()
	if h, err := c.Health(ctx); err != nil || h.Models != "simulated" {
		t.Fatalf("health: %+v %v", h, err)
	}
	simple := mustAgent(t, c, "simple", client.AgentConfig{SystemPrompt: "You answer questions about {{ product }}.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"question":{"type":"string","minLength":1}},"required":["question"]}`)})

	t.Run("sync", func(t *testing.T) {
		x, err := c.Execute(ctx, simple.ID, client.ExecuteRequest{Input: map[string]any{"question": "How do refunds work?", "product": "Acme"}})
		if err != nil {
			t.Fatal(err)
		}
		if x.Status != "completed" || len(x.Output) == 0 || client.Val(x.TokenUsage.TotalTokens) == 0 || x.Cost <= 0 || x.DurationMs == nil ||
			x.TraceID == "" || x.StartedAt == nil || x.CompletedAt == nil || x.Source != "api" || *x.AgentVersionID != *simple.ActiveVersionID {
			t.Fatalf("sync execution: %+v", x)
		}
		var out struct{ Content string }
		if json.Unmarshal(x.Output, &out) != nil || !strings.Contains(strings.ToLower(out.Content), "refund") {
			t.Fatalf("output not derived from the input: %s", x.Output)
		}
		tr, err := c.TraceGet(ctx, x.TraceID)
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[string]int{}
		for _, sp := range tr.AllSpans() {
			kinds[string(sp.Kind)]++
		}
		if kinds["prompt"] != 1 || kinds["llm"] != 1 || kinds["agent"] != 1 || tr.Cost != x.Cost || !reflect.DeepEqual(tr.TokenUsage, x.TokenUsage) {
			t.Fatalf("trace: kinds %v cost %v/%v usage %+v/%+v", kinds, tr.Cost, x.Cost, tr.TokenUsage, x.TokenUsage)
		}
		l, err := c.TraceList(ctx, client.ListTracesParams{ExecutionID: x.ID})
		if err != nil || l.Pagination.Total != 1 {
			t.Fatalf("trace list by execution: %v %v", l, err)
		}
	})

	t.Run("input schema 422 records nothing", func(t *testing.T) {
		before, _ := c.ExecutionList(ctx, client.ListExecutionsParams{AgentID: simple.ID})
		_, err := c.Execute(ctx, simple.ID, client.ExecuteRequest{Input: map[string]any{"question": ""}})
		if ae := apiErr(t, err, 422); !strings.Contains(ae.Message, "/question") {
			t.Fatalf("message does not name the path: %s", ae.Message)
		}
		after, _ := c.ExecutionList(ctx, client.ListExecutionsParams{AgentID: simple.ID})
		if after.Pagination.Total != before.Pagination.Total {
			t.Fatal("a rejected input left an execution record")
		}
	})

	t.Run("async poll and stream", func(t *testing.T) {
		x, err := c.Execute(ctx, simple.ID, client.ExecuteRequest{Input: map[string]any{"question": "async?"}, Async: client.Ptr(true)})
		if err != nil || x.Status != "pending" {
			t.Fatalf("async: %+v %v", x, err)
		}
		done, err := c.Wait(ctx, x.ID, 5*time.Millisecond, false)
		if err != nil || done.Status != "completed" {
			t.Fatalf("poll: %+v %v", done, err)
		}
		y, _ := c.Execute(ctx, simple.ID, client.ExecuteRequest{Input: map[string]any{"question": "stream it"}, Async: client.Ptr(true)})
		s, err := c.ExecutionStream(ctx, y.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := s.Collect()
		if err != nil {
			t.Fatal(err)
		}
		checkFrames(t, evs, 1)
		stored, _ := c.ExecutionGet(ctx, y.ID)
		var done2 struct{ Output json.RawMessage }
		_ = json.Unmarshal([]byte(evs[len(evs)-1].Data), &done2)
		if !jsonSame(done2.Output, stored.Output) {
			t.Fatalf("done output %s != stored %s", done2.Output, stored.Output)
		}
		// A finished execution's stream sends its one terminal frame.
		s, _ = c.ExecutionStream(ctx, y.ID, -1)
		evs, err = s.Collect()
		if err != nil || len(evs) != 1 || evs[0].Event != "done" {
			t.Fatalf("finished stream: %+v %v", evs, err)
		}
	})

	t.Run("reconnect with Last-Event-ID", func(t *testing.T) {
		slow := mustAgent(t, c, "simple", client.AgentConfig{Simulation: client.Simulation{LatencyMs: client.Ptr[int64](3)}})
		x, _ := c.Execute(ctx, slow.ID, client.ExecuteRequest{Input: map[string]any{"message": "tell me a long story about the sea and ships"}, Async: client.Ptr(true)})
		s, err := c.ExecutionStream(ctx, x.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []client.StreamEvent
		for len(got) < 3 {
			ev, ok, err := s.Next()
			if err != nil || !ok {
				t.Fatalf("first frames: %v %v", ok, err)
			}
			got = append(got, ev)
		}
		s.Close()
		s, err = c.ExecutionStream(ctx, x.ID, got[len(got)-1].ID)
		if err != nil {
			t.Fatal(err)
		}
		rest, err := s.Collect()
		if err != nil {
			t.Fatal(err)
		}
		all := append(got, rest...)
		checkFrames(t, all, 1)
		// After the run ended, a reconnect replays exactly the frames after the id.
		s, _ = c.ExecutionStream(ctx, x.ID, 2)
		replay, err := s.Collect()
		if err != nil || len(replay) != len(all)-2 || replay[0].ID != 3 {
			t.Fatalf("replay after end: %d frames (want %d), %v", len(replay), len(all)-2, err)
		}
	})

	t.Run("cancel while running", func(t *testing.T) {
		slow := mustAgent(t, c, "simple", client.AgentConfig{Simulation: client.Simulation{LatencyMs: client.Ptr[int64](200)}})
		x, _ := c.Execute(ctx, slow.ID, client.ExecuteRequest{Input: map[string]any{"message": "a slow answer please"}, Async: client.Ptr(true)})
		for {
			cur, _ := c.ExecutionGet(ctx, x.ID)
			if cur.Status == "running" {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		t0 := time.Now()
		got, err := c.ExecutionCancel(ctx, x.ID)
		if err != nil || got.Status != "cancelled" {
			t.Fatalf("cancel: %s %v %q", got.Status, err, *got.Error)
		}
		if d := time.Since(t0); d > 2*time.Second {
			t.Fatalf("cancel took %v while blocked in a model call", d)
		} else {
			t.Logf("cancel of a run blocked in a model call answered in %v", d)
		}
		_, err = c.ExecutionCancel(ctx, x.ID)
		if ae := apiErr(t, err, 409); !strings.Contains(ae.Message, "cancelled") {
			t.Fatalf("409 message: %s", ae.Message)
		}
		s, _ := c.ExecutionStream(ctx, x.ID, 0)
		evs, err := s.Collect()
		if err != nil || evs[len(evs)-1].Event != "error" {
			t.Fatalf("cancelled stream: %v %v", evs, err)
		}
	})

	t.Run("approve and deny", func(t *testing.T) {
		ap := mustAgent(t, c, "approval", client.AgentConfig{Approval: client.ApprovalConfig{Checkpoints: []client.Checkpoint{
			{Name: "review", Description: "A human reviews the reply", When: "before_output"}}}})
		x, err := c.Execute(ctx, ap.ID, client.ExecuteRequest{Input: map[string]any{"message": "refund 200 dollars"}})
		if err != nil || x.Status != "awaiting_approval" {
			t.Fatalf("approval run: %+v %v", x, err)
		}
		inbox, err := c.ApprovalList(ctx, client.ListApprovalsParams{})
		if err != nil || inbox.Pagination.Total < 1 || inbox.Data[0].ExecutionID != x.ID || inbox.Data[0].Checkpoint != "review" ||
			!strings.Contains(string(inbox.Data[0].Awaiting), "draft_output") {
			t.Fatalf("inbox: %+v %v", inbox, err)
		}
		if _, err := c.ExecutionApprove(ctx, x.ID, "looks right"); err != nil {
			t.Fatal(err)
		}
		done, err := c.Wait(ctx, x.ID, 5*time.Millisecond, false)
		if err != nil || done.Status != "completed" || len(done.Output) == 0 {
			t.Fatalf("after approve: %+v %v", done, err)
		}
		a, _ := c.ApprovalGet(ctx, inbox.Data[0].ID)
		if a.Status != "approved" || a.Comment != "looks right" || a.DecidedAt == nil {
			t.Fatalf("approval record: %+v", a)
		}
		_, err = c.ExecutionApprove(ctx, x.ID, "")
		if ae := apiErr(t, err, 409); !strings.Contains(ae.Message, "completed") || !strings.Contains(ae.Message, "running") {
			t.Fatalf("approve completed: %s", ae.Message)
		}
		y, _ := c.Execute(ctx, ap.ID, client.ExecuteRequest{Input: map[string]any{"message": "refund 9000 dollars"}})
		denied, err := c.ExecutionDeny(ctx, y.ID, "too much")
		if err != nil || denied.Status != "rejected" || denied.Error == nil || !strings.Contains(*denied.Error, "too much") {
			t.Fatalf("deny: %+v %v", denied, err)
		}
		s, _ := c.ExecutionStream(ctx, y.ID, 0)
		evs, err := s.Collect()
		if err != nil || evs[len(evs)-1].Event != "error" || !strings.Contains(evs[len(evs)-1].Data, "too much") {
			t.Fatalf("rejected stream: %v %v", evs, err)
		}
	})

	t.Run("output schema failure", func(t *testing.T) {
		strict := mustAgent(t, c, "simple", client.AgentConfig{OutputSchema: json.RawMessage(
			`{"type":"object","properties":{"score":{"type":"integer","minimum":1000000}},"required":["score"]}`)})
		x, err := c.Execute(ctx, strict.ID, client.ExecuteRequest{Input: map[string]any{"message": "rate this"}})
		if err != nil || x.Status != "failed" || x.Error == nil || !strings.Contains(*x.Error, "output_schema") || !strings.Contains(*x.Error, "/score") {
			t.Fatalf("output schema failure: %+v %v", x, err)
		}
	})

	t.Run("simulated failure", func(t *testing.T) {
		bad := mustAgent(t, c, "simple", client.AgentConfig{Simulation: client.Simulation{Fail: client.FailAlways(), FailMessage: "provider exploded"}})
		x, _ := c.Execute(ctx, bad.ID, client.ExecuteRequest{Input: map[string]any{"message": "hi"}})
		if x.Status != "failed" || !strings.Contains(*x.Error, "provider exploded") {
			t.Fatalf("failure: %+v", x)
		}
	})

	t.Run("multi_agent tree", func(t *testing.T) {
		a1 := mustAgent(t, c, "simple", client.AgentConfig{SystemPrompt: "You check orders."})
		a2 := mustAgent(t, c, "chain", client.AgentConfig{Steps: []client.AgentStep{{ID: "draft", Instruction: "Draft"}, {ID: "polish", Instruction: "Polish"}}})
		boss := mustAgent(t, c, "multi_agent", client.AgentConfig{SubAgents: []string{a1.ID, a2.ID}})
		x, err := c.Execute(ctx, boss.ID, client.ExecuteRequest{Input: map[string]any{"message": "where is order 7?"}})
		if err != nil || x.Status != "completed" {
			t.Fatalf("multi_agent: %+v %v", x, err)
		}
		tree, err := c.ExecutionTree(ctx, x.ID)
		if err != nil || len(tree.Children) != 2 || tree.Children[0].AgentID != a1.ID || *tree.Children[1].ParentID != x.ID ||
			tree.Children[1].Source != "agent" || tree.Children[1].Status != "completed" {
			t.Fatalf("tree: %+v %v", tree, err)
		}
		if client.Val(x.TokenUsage.TotalTokens) <= client.Val(tree.Children[0].TokenUsage.TotalTokens)+client.Val(tree.Children[1].TokenUsage.TotalTokens) {
			t.Fatalf("parent usage %d does not include its children", x.TokenUsage.TotalTokens)
		}
	})

	t.Run("idempotent execute", func(t *testing.T) {
		key := client.WithIdempotencyKey("exec-" + simple.ID)
		in := client.ExecuteRequest{Input: map[string]any{"question": "once"}}
		x1, err := c.Execute(ctx, simple.ID, in, key)
		if err != nil {
			t.Fatal(err)
		}
		x2, err := c.Execute(ctx, simple.ID, in, key)
		if err != nil || x2.ID != x1.ID {
			t.Fatalf("replay: %v %v", x2, err)
		}
		_, err = c.Execute(ctx, simple.ID, client.ExecuteRequest{Input: map[string]any{"question": "twice"}}, key)
		apiErr(t, err, 409)
	})

	t.Run("chat", func(t *testing.T) {
		sess, err := c.ChatSessionCreate(ctx, simple.ID, "Support", nil)
		if err != nil {
			t.Fatal(err)
		}
		r1, err := c.ChatSend(ctx, sess.ID, "What is the warranty on headphones?")
		if err != nil || r1.Role != "assistant" || r1.Content == "" || r1.ExecutionID == "" || r1.UserMessageID == "" {
			t.Fatalf("chat send: %+v %v", r1, err)
		}
		s, err := c.ChatStream(ctx, sess.ID, "And on speakers?")
		if err != nil {
			t.Fatal(err)
		}
		evs, err := s.Collect()
		if err != nil || evs[0].Event != "execution" || evs[len(evs)-1].Event != "done" {
			t.Fatalf("chat stream: %v %v", evs, err)
		}
		checkFrames(t, evs[1:], 1)
		msgs, err := c.ChatMessageList(ctx, sess.ID, client.ListChatMessagesParams{})
		if err != nil || msgs.Pagination.Total != 4 || msgs.Data[0].Role != "user" || msgs.Data[3].Role != "assistant" ||
			*msgs.Data[3].UserMessageID != msgs.Data[2].ID {
			t.Fatalf("history: %+v %v", msgs, err)
		}
		x, _ := c.ExecutionGet(ctx, r1.ExecutionID)
		if x.Source != "chat" || x.SessionID == nil || *x.SessionID != sess.ID {
			t.Fatalf("chat execution: %+v", x)
		}
		_, err = c.ChatSessionCreate(ctx, "nope", "", nil)
		apiErr(t, err, 422)
	})

	t.Run("busy session 409", func(t *testing.T) {
		slow := mustAgent(t, c, "simple", client.AgentConfig{Simulation: client.Simulation{LatencyMs: client.Ptr[int64](20)}})
		sess, _ := c.ChatSessionCreate(ctx, slow.ID, "", nil)
		s, err := c.ChatStream(ctx, sess.ID, "first message with a slow reply")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Next(); err != nil {
			t.Fatal(err)
		}
		_, err = c.ChatSend(ctx, sess.ID, "second, too soon")
		if ae := apiErr(t, err, 409); !strings.Contains(ae.Message, "still generating") {
			t.Fatalf("busy message: %s", ae.Message)
		}
		if _, err := s.Collect(); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ChatSend(ctx, sess.ID, "now it is free"); err != nil {
			t.Fatalf("session still locked after the reply: %v", err)
		}
	})
}

// checkFrames asserts ids are consecutive from first, exactly one terminal frame ends the
// list, and every frame is one of the spec's events.
func checkFrames(t *testing.T, evs []client.StreamEvent, first int) {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("no frames")
	}
	allowed := map[string]bool{"thinking": true, "tool_start": true, "tool_end": true, "content": true, "done": true, "error": true}
	terminals := 0
	for i, ev := range evs {
		if ev.ID != first+i {
			t.Fatalf("frame %d has id %d, want %d (missed or repeated frames)", i, ev.ID, first+i)
		}
		if !allowed[ev.Event] {
			t.Fatalf("unexpected event %q", ev.Event)
		}
		if ev.Terminal() {
			terminals++
		}
	}
	if terminals != 1 || !evs[len(evs)-1].Terminal() {
		t.Fatalf("%d terminal frames; last is %q", terminals, evs[len(evs)-1].Event)
	}
}

func jsonSame(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}

// TestConcurrentExecutionsAndStreams runs 200 async executions and 200 streams at once.
func TestConcurrentExecutionsAndStreams(t *testing.T) {
	t.Parallel()
	p := start(t, emulatorEnv(nil), "emulator")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := client.New(p.URL, client.WithHTTPClient(&http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512}}))
	a := mustAgent(t, c, "simple", client.AgentConfig{Simulation: client.Simulation{LatencyMs: client.Ptr[int64](1)}})
	const n = 200
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Go(func() {
			x, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": fmt.Sprintf("request number %d about shipping", i)}, Async: client.Ptr(true)})
			if err != nil {
				errs <- err
				return
			}
			ids[i] = x.ID
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	type result struct {
		id     string
		frames []client.StreamEvent
		err    error
	}
	results := make(chan result, n)
	for _, id := range ids {
		wg.Go(func() {
			s, err := c.ExecutionStream(ctx, id, 0)
			if err != nil {
				results <- result{id: id, err: err}
				return
			}
			evs, err := s.Collect()
			results <- result{id: id, frames: evs, err: err}
		})
	}
	wg.Wait()
	close(results)
	for r := range results {
		if r.err != nil {
			t.Fatalf("stream %s: %v", r.id, r.err)
		}
		checkFrames(t, r.frames, 1)
		x, err := c.ExecutionGet(ctx, r.id)
		if err != nil || !x.Terminal() {
			t.Fatalf("execution %s not terminal: %+v %v", r.id, x, err)
		}
		var done struct{ Output json.RawMessage }
		_ = json.Unmarshal([]byte(r.frames[len(r.frames)-1].Data), &done)
		if !jsonSame(done.Output, x.Output) {
			t.Fatalf("execution %s: streamed output %s != stored %s", r.id, done.Output, x.Output)
		}
	}
}
