package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
	"github.com/agentplane/agentplane/internal/mcpclient/mcptest"
)

// approvalModel is a fake OpenAI model for approval tests: offered ask_user, it asks which
// size and then answers with the answer; otherwise it calls lookup_order three times and
// stats in one batch, then answers with the tool results joined by " | ".
func approvalModel(t *testing.T) *llmtest.Server {
	fake := llmtest.NewOpenAI()
	t.Cleanup(fake.Close)
	fake.Fallback = func(req llmtest.Request) llmtest.Reply {
		var results []string
		for _, m := range items(req.Body["messages"]) {
			if m["role"] == "tool" {
				results = append(results, textOf(m["content"]))
			}
		}
		if len(results) > 0 {
			return llmtest.Reply{Text: []string{strings.Join(results, " | ")}}
		}
		for _, tl := range items(req.Body["tools"]) {
			if tl["function"].(map[string]any)["name"] == "ask_user" {
				return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "q1", Name: "ask_user", Args: []string{`{"question":"Which size?","choices":["S","M"]}`}}}}
			}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "c1", Name: "lookup_order", Args: []string{`{"order_id":"A-17"}`}},
			{ID: "c2", Name: "lookup_order", Args: []string{`{"order_id":"B-2"}`}},
			{ID: "c3", Name: "lookup_order", Args: []string{`{"order_id":"D-4"}`}},
			{ID: "c4", Name: "stats", Args: []string{`{}`}},
		}}
	}
	return fake
}

// approvalSetup registers the fake model's credential and an MCP server with refreshed tools
// on a server, and returns an agent whose lookup_order calls wait for a reviewer.
func approvalSetup(t *testing.T, c *client.Client, fake *llmtest.Server, srv *mcptest.Server, extra client.ApprovalConfig) *client.Agent {
	t.Helper()
	ctx := context.Background()
	if _, err := c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "openai", Type: "api_key", Provider: "openai",
		Value: "sk-e2e-approvals-0000000000000000000", Metadata: map[string]any{"base_url": fake.URL + "/v1"}}); err != nil {
		t.Fatal(err)
	}
	tool, err := c.MCPToolCreate(ctx, client.McpToolCreateRequest{Name: "Orders", URL: srv.Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.MCPToolRefresh(ctx, tool.ID); err != nil {
		t.Fatal(err)
	}
	// First match wins: stats never waits although "*" would hold it.
	extra.Tools = []client.ToolApproval{{Match: "stats", Mode: "never"}, {Match: "lookup_*", Mode: "always"}, {Match: "*", Mode: "always"}}
	return mustAgent(t, c, "agent", client.AgentConfig{Model: "gpt-4o-mini",
		Tools: []client.AgentConfig_Tools_Item{client.MCPToolNames(tool.ID, "lookup_order", "stats")}, Approval: extra})
}

// awaitingRun starts an async run and waits until it pauses for approval.
func awaitingRun(t *testing.T, c *client.Client, agentID string) *client.Execution {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	x, err := c.Execute(ctx, agentID, client.ExecuteRequest{Input: map[string]any{"message": "Check my orders."}, Async: client.Ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	x, err = c.Wait(ctx, x.ID, 5*time.Millisecond, true)
	if err != nil || x.Status != "awaiting_approval" {
		t.Fatalf("waiting run: %+v %v", x, err)
	}
	return x
}

func wantStatus422(t *testing.T, err error, field string) {
	t.Helper()
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != 422 || !strings.Contains(ae.Message, field) {
		t.Fatalf("want a 422 naming %s, got %v", field, err)
	}
}

// TestServeToolApprovals: per-tool approval over a real model wire and a real MCP server. A
// batch with held calls waits whole (the stats call, not held, waits with it); the stream
// announces the pause; a bad edit and a decision for no pending call are 422s; approve,
// reject and edit in one decision resume the run, which runs the approved and edited calls
// only, gives the model the reviewer's reason for the rejected one, and the approval keeps
// the original and edited arguments and who decided. ask_user through the API: its question
// pauses the run, an approve without answer is a 422, the answer is the tool's result.
func TestServeToolApprovals(t *testing.T) {
	t.Parallel()
	env := serveEnv(dataDir(t))
	delete(env, "MODELS")
	p := start(t, env, "serve")
	c := p.C
	ctx := context.Background()
	srv := mcptest.New(mcptest.StreamableHTTP)
	defer srv.Close()
	fake := approvalModel(t)
	a := approvalSetup(t, c, fake, srv, client.ApprovalConfig{})

	x := awaitingRun(t, c, a.ID)
	if n := srv.Calls(); n != 0 {
		t.Fatalf("%d tool calls ran before the decision", n)
	}
	inbox, err := c.ApprovalList(ctx, client.ListApprovalsParams{})
	if err != nil || len(inbox.Data) != 1 {
		t.Fatalf("inbox: %+v %v", inbox, err)
	}
	ap := inbox.Data[0]
	var ids []string
	for _, pc := range ap.Calls {
		ids = append(ids, pc.CallID+":"+pc.Name+":"+string(pc.Arguments))
	}
	if ap.Kind != "tools" || ap.ExecutionID != x.ID || strings.Join(ids, ",") !=
		`c1:lookup_order:{"order_id":"A-17"},c2:lookup_order:{"order_id":"B-2"},c3:lookup_order:{"order_id":"D-4"}` || len(ap.Calls[0].InputSchema) == 0 {
		t.Fatalf("approval: %+v", ap)
	}
	// The stream announced the pause with the pending calls.
	st, err := c.ExecutionStream(ctx, x.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var announced map[string]any
	for announced == nil {
		ev, ok, err := st.Next()
		if err != nil || !ok {
			t.Fatalf("stream ended before approval_required: %v", err)
		}
		if ev.Event == "approval_required" {
			decode(t, []byte(ev.Data), &announced)
		}
	}
	st.Close()
	if announced["execution_id"] != x.ID || announced["approval_id"] != ap.ID || len(items(announced["calls"])) != 3 || items(announced["calls"])[1]["call_id"] != "c2" {
		t.Fatalf("approval_required frame: %v", announced)
	}

	// Refused decisions change nothing.
	_, err = c.ExecutionDecide(ctx, x.ID, client.ApproveRequest{Decisions: []client.CallDecision{{CallID: "c2", Decision: "edit", Arguments: json.RawMessage(`{"order_id":5}`)}}})
	wantStatus422(t, err, "decisions[0].arguments")
	_, err = c.ExecutionDecide(ctx, x.ID, client.ApproveRequest{Decisions: []client.CallDecision{{CallID: "c4", Decision: "reject"}}})
	wantStatus422(t, err, "decisions[0].call_id")
	_, err = c.ExecutionDecide(ctx, x.ID, client.ApproveRequest{Answer: "yes"})
	wantStatus422(t, err, "answer")

	_, err = c.ExecutionDecide(ctx, x.ID, client.ApproveRequest{Comment: "checked", Decisions: []client.CallDecision{
		{CallID: "c2", Decision: "edit", Arguments: json.RawMessage(`{"order_id":"C-3"}`)},
		{CallID: "c3", Decision: "reject", Message: "wrong customer"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	done, err := c.Wait(ctx, x.ID, 5*time.Millisecond, false)
	if err != nil || done.Status != "completed" {
		t.Fatalf("after the decision: %+v %v", done, err)
	}
	want := "Order A-17 shipped on 2024-05-02 by DHL. | Order C-3 shipped on 2024-05-02 by DHL. | " +
		"The reviewer rejected this call to lookup_order: wrong customer | {\"open\":3,\"orders\":42}"
	if got := outputText(done); got != want {
		t.Errorf("output %q\nwant   %q", got, want)
	}
	if args := srv.Args(); len(args) != 3 || slices.Contains(args, `{"order_id":"B-2"}`) || slices.Contains(args, `{"order_id":"D-4"}`) {
		t.Errorf("the server ran %v", args)
	}
	// The model saw the edited arguments in its own turn.
	reqs := fake.Requests()
	last := items(reqs[len(reqs)-1].Body["messages"])
	var sawEdit bool
	for _, m := range last {
		for _, tc := range items(m["tool_calls"]) {
			if tc["id"] == "c2" && tc["function"].(map[string]any)["arguments"] == `{"order_id":"C-3"}` {
				sawEdit = true
			}
		}
	}
	if !sawEdit {
		t.Errorf("the model's turn does not carry the edited call: %v", last)
	}
	decided, err := c.ApprovalGet(ctx, ap.ID)
	if err != nil || decided.Status != "approved" || decided.Comment != "checked" || !strings.HasPrefix(decided.DecidedBy, "api_key:") ||
		decided.Calls[0].Decision != "approve" || decided.Calls[1].Decision != "edit" || string(decided.Calls[1].Arguments) != `{"order_id":"B-2"}` ||
		string(decided.Calls[1].EditedArguments) != `{"order_id":"C-3"}` || decided.Calls[2].Decision != "reject" || decided.Calls[2].Message != "wrong customer" {
		t.Fatalf("decided approval: %+v %v", decided, err)
	}

	// Deny still ends the run rejected.
	x2 := awaitingRun(t, c, a.ID)
	if denied, err := c.ExecutionDeny(ctx, x2.ID, "not today"); err != nil || denied.Status != "rejected" {
		t.Fatalf("deny: %+v %v", denied, err)
	}

	// ask_user through the API.
	asker := mustAgent(t, c, "agent", client.AgentConfig{Model: "gpt-4o-mini", AskUser: client.Ptr(true)})
	q := awaitingRun(t, c, asker.ID)
	qs, err := c.ApprovalList(ctx, client.ListApprovalsParams{})
	if err != nil || len(qs.Data) != 1 || qs.Data[0].Kind != "question" || qs.Data[0].Question != "Which size?" || strings.Join(qs.Data[0].Choices, ",") != "S,M" {
		t.Fatalf("question: %+v %v", qs, err)
	}
	_, err = c.ExecutionApprove(ctx, q.ID, "")
	wantStatus422(t, err, "answer")
	if _, err := c.ExecutionDecide(ctx, q.ID, client.ApproveRequest{Answer: "M"}); err != nil {
		t.Fatal(err)
	}
	answered, err := c.Wait(ctx, q.ID, 5*time.Millisecond, false)
	if err != nil || answered.Status != "completed" || outputText(answered) != "M" {
		t.Fatalf("answered run: %+v %v (%s)", answered, err, outputText(answered))
	}
	askInChat(t, c, asker.ID)
}

// askInChat: in a chat session the question is the turn's reply and the next message
// answers it, over plain messages and over streams (the asking turn's stream ends with
// approval_required; the answer's stream has only the continuation's frames).
func askInChat(t *testing.T, c *client.Client, agentID string) {
	ctx := context.Background()
	sess, err := c.ChatSessionCreate(ctx, agentID, "shirts", nil)
	if err != nil {
		t.Fatal(err)
	}
	reply, err := c.ChatSend(ctx, sess.ID, "I want a shirt.")
	if err != nil || reply.Content != "Which size?" {
		t.Fatalf("asking turn: %+v %v", reply, err)
	}
	asked := reply.ExecutionID
	reply, err = c.ChatSend(ctx, sess.ID, "M", client.WithIdempotencyKey("answer-1"))
	if err != nil || reply.Content != "M" || reply.ExecutionID != asked {
		t.Fatalf("answering turn: %+v %v", reply, err)
	}
	// The answer sent again with its Idempotency-Key is the same turn, not a new one.
	again, err := c.ChatSend(ctx, sess.ID, "M", client.WithIdempotencyKey("answer-1"))
	if err != nil || again.ExecutionID != asked || again.UserMessageID != reply.UserMessageID {
		t.Fatalf("answer retried with its key: %+v %v (first %+v)", again, err, reply)
	}
	msgs, err := c.ChatMessageList(ctx, sess.ID, client.ListChatMessagesParams{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs.Data {
		got = append(got, string(m.Role)+":"+m.Content)
	}
	if strings.Join(got, "|") != "user:I want a shirt.|assistant:Which size?|user:M|assistant:M" {
		t.Fatalf("session messages: %v", got)
	}
	if ap, err := c.ApprovalList(ctx, client.ListApprovalsParams{Status: "all"}); err != nil || ap.Data[0].ExecutionID != asked || ap.Data[0].Answer != "M" || ap.Data[0].DecidedBy != "chat" {
		t.Fatalf("answered question: %+v %v", ap.Data[0], err)
	}

	st, err := c.ChatStream(ctx, sess.ID, "Another shirt.")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := st.Collect()
	if err != nil || len(evs) == 0 || evs[len(evs)-1].Event != "approval_required" || !strings.Contains(evs[len(evs)-1].Data, "Which size?") {
		t.Fatalf("asking stream: %+v %v", evs, err)
	}
	st, err = c.ChatStream(ctx, sess.ID, "S")
	if err != nil {
		t.Fatal(err)
	}
	evs, err = st.Collect()
	if err != nil || count(evs, "approval_required") != 0 || count(evs, "done") != 1 || strings.Join(contentOf(evs, "content"), "") != "S" {
		t.Fatalf("answering stream: %+v %v", evs, err)
	}
}

// TestServeToolApprovalsCluster: two `serve` nodes on one PostgreSQL database. A run paused
// on n1 is decided through n2 (approve, edit and reject in one batch) and completes as
// decided. A version with approval.timeout_seconds: the leader's timer rejects the pending
// calls once: the run goes on with each rejection as its result, the model is called twice
// for it, and each call has one tool_end frame.
func TestServeToolApprovalsCluster(t *testing.T) {
	t.Parallel()
	pg := postgresURL(t)
	if pg == "" {
		t.Skip("TEST_DATABASE_URL is not set: the cluster needs PostgreSQL")
	}
	ctx := context.Background()
	env := serveEnv(t.TempDir())
	for k, v := range map[string]string{"DATABASE_URL": pg, "MODELS": "real", "LEASE_TIMEOUT": "3s", "HEARTBEAT_INTERVAL": "500ms", "RATE_LIMIT": "0"} {
		env[k] = v
	}
	n1 := start(t, env, "serve")
	n2 := start(t, env, "serve")
	c1 := n1.C
	c2 := client.New(n2.URL, client.WithAPIKey(n1.Key))
	srv := mcptest.New(mcptest.StreamableHTTP)
	defer srv.Close()
	fake := approvalModel(t)
	a := approvalSetup(t, c1, fake, srv, client.ApprovalConfig{})

	// A sync run stays on the node that took it: n1.
	x, err := c1.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "cross-node run"}})
	if err != nil || x.Status != "awaiting_approval" {
		t.Fatalf("run on n1: %+v %v", x, err)
	}
	if _, err := c2.ExecutionDecide(ctx, x.ID, client.ApproveRequest{Decisions: []client.CallDecision{
		{CallID: "c1", Decision: "reject", Message: "not yours"},
		{CallID: "c3", Decision: "edit", Arguments: json.RawMessage(`{"order_id":"E-5"}`)},
	}}); err != nil {
		t.Fatal(err)
	}
	done, err := c1.Wait(ctx, x.ID, 5*time.Millisecond, false)
	want := "The reviewer rejected this call to lookup_order: not yours | Order B-2 shipped on 2024-05-02 by DHL. | " +
		"Order E-5 shipped on 2024-05-02 by DHL. | {\"open\":3,\"orders\":42}"
	if err != nil || done.Status != "completed" || outputText(done) != want {
		t.Fatalf("decided through n2: %+v %v\n%q", done, err, outputText(done))
	}

	// The timer: one second, decided by whichever node leads.
	timed := approvalSetupAgent(t, c1, a, client.ApprovalConfig{TimeoutSeconds: 1})
	x, err = c2.Execute(ctx, timed.ID, client.ExecuteRequest{Input: map[string]any{"message": "timeout run"}})
	if err != nil || x.Status != "awaiting_approval" {
		t.Fatalf("timed run: %+v %v", x, err)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	done, err = c1.Wait(wctx, x.ID, 20*time.Millisecond, false)
	if err != nil || done.Status != "completed" {
		t.Fatalf("timed out run: %+v %v", done, err)
	}
	const why = "The reviewer rejected this call to lookup_order: no decision within config.approval.timeout_seconds"
	if got := outputText(done); strings.Count(got, why) != 3 || !strings.HasSuffix(got, `{"open":3,"orders":42}`) {
		t.Errorf("output %q", got)
	}
	ap, err := c1.ApprovalList(ctx, client.ListApprovalsParams{Status: "all"})
	if err != nil || ap.Data[0].ExecutionID != x.ID || ap.Data[0].DecidedBy != "timeout" || ap.Data[0].OnTimeout != "reject" || ap.Data[0].ExpiresAt.IsZero() {
		t.Fatalf("timed out approval: %+v %v", ap.Data[0], err)
	}
	calls := 0
	for _, r := range fake.Requests() {
		if strings.Contains(string(r.Raw), "timeout run") {
			calls++
		}
	}
	evs := frames(t, c1, x.ID)
	if calls != 2 || count(evs, "tool_end") != 4 || count(evs, "approval_required") != 1 || count(evs, "done") != 1 {
		t.Errorf("model calls %d, tool_end %d, approval_required %d, done %d", calls, count(evs, "tool_end"), count(evs, "approval_required"), count(evs, "done"))
	}
}

// approvalSetupAgent makes another agent with the tools of like and the approval settings ac
// (lookup_order held, as approvalSetup's).
func approvalSetupAgent(t *testing.T, c *client.Client, like *client.Agent, ac client.ApprovalConfig) *client.Agent {
	t.Helper()
	ac.Tools = like.Config.Approval.Tools
	return mustAgent(t, c, "agent", client.AgentConfig{Model: "gpt-4o-mini", Tools: like.Config.Tools, Approval: ac})
}

// TestServeAskUserInSlackThread: on a Slack trigger, an ask_user question is the reply in the
// thread (with its choices), and the thread's next message answers it: the run completes
// with the answer and its reply goes to the thread too.
func TestServeAskUserInSlackThread(t *testing.T) {
	t.Parallel()
	env := serveEnv(dataDir(t))
	delete(env, "MODELS")
	p := start(t, env, "serve")
	c := p.C
	ctx := context.Background()
	fake := approvalModel(t)
	if _, err := c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "openai", Type: "api_key", Provider: "openai",
		Value: "sk-e2e-approvals-0000000000000000000", Metadata: map[string]any{"base_url": fake.URL + "/v1"}}); err != nil {
		t.Fatal(err)
	}
	asker := mustAgent(t, c, "agent", client.AgentConfig{Model: "gpt-4o-mini", AskUser: client.Ptr(true)})
	var mu sync.Mutex
	var texts []string
	slack := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		_ = json.NewDecoder(r.Body).Decode(&b)
		mu.Lock()
		texts = append(texts, fmt.Sprint(b["thread_ts"], ": ", b["text"]))
		mu.Unlock()
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer slack.Close()
	cred, err := c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "slack bot", Type: "bearer_token", Value: "xoxb-e2e-token",
		Metadata: map[string]any{"base_url": slack.URL}})
	if err != nil {
		t.Fatal(err)
	}
	const secret = "e2e-slack-signing-secret"
	tr, err := c.TriggerCreate(ctx, client.TriggerCreateRequest{AgentID: asker.ID, Type: "slack", Name: "Slack",
		Config: map[string]any{"signing_secret": secret, "bot_credential_id": cred.ID}})
	if err != nil {
		t.Fatal(err)
	}
	replies := func(n int) []string {
		t.Helper()
		waitUntil(t, fmt.Sprintf("%d replies in Slack", n), func() bool { mu.Lock(); defer mu.Unlock(); return len(texts) >= n })
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(texts)
	}
	slackEvent(t, tr.HookURL, secret, "Ev1", `{"type":"app_mention","user":"U1","text":"I want a shirt","channel":"C1","ts":"1.5"}`)
	if got := replies(1); got[0] != "1.5: Which size? (S / M)" {
		t.Fatalf("question in the thread: %v", got)
	}
	slackEvent(t, tr.HookURL, secret, "Ev2", `{"type":"message","user":"U1","text":"M","channel":"C1","ts":"1.6","thread_ts":"1.5"}`)
	if got := replies(2); got[1] != "1.5: M" {
		t.Fatalf("reply after the answer: %v", got)
	}
	ap, err := c.ApprovalList(ctx, client.ListApprovalsParams{Status: "all"})
	if err != nil || len(ap.Data) != 1 || ap.Data[0].Answer != "M" || ap.Data[0].DecidedBy != "slack" {
		t.Fatalf("the question's approval: %+v %v", ap, err)
	}
	// Slack delivers the answer again (its retry of the same event): no new turn starts.
	runs, err := c.ExecutionList(ctx, client.ListExecutionsParams{AgentID: asker.ID})
	if err != nil {
		t.Fatal(err)
	}
	if st := slackEventStatus(t, tr.HookURL, secret, "Ev2", `{"type":"message","user":"U1","text":"M","channel":"C1","ts":"1.6","thread_ts":"1.5"}`); st != http.StatusOK {
		t.Fatalf("redelivered answer: %d, want 200 (a duplicate)", st)
	}
	after, err := c.ExecutionList(ctx, client.ListExecutionsParams{AgentID: asker.ID})
	if err != nil || after.Pagination.Total != runs.Pagination.Total {
		t.Fatalf("a redelivered answer made %d runs, had %d: %v", after.Pagination.Total, runs.Pagination.Total, err)
	}
}

// TestEmulatorAskUser: the emulator serves questions too: its simulated model calls ask_user,
// the run waits with an approval of kind question, and the answer resumes it to completion.
func TestEmulatorAskUser(t *testing.T) {
	t.Parallel()
	p := start(t, emulatorEnv(nil), "emulator")
	c := p.C
	ctx := context.Background()
	asker := mustAgent(t, c, "agent", client.AgentConfig{Model: "gpt-4o-mini", AskUser: client.Ptr(true)})
	x := awaitingRun(t, c, asker.ID)
	pending, err := c.ExecutionApproval(ctx, x.ID)
	if err != nil || pending == nil || pending.Kind != "question" || pending.Question == "" || len(pending.Calls) != 1 || pending.Calls[0].Name != "ask_user" {
		t.Fatalf("pending question: %+v %v", pending, err)
	}
	if _, err := c.ExecutionDecide(ctx, x.ID, client.ApproveRequest{Answer: "size M"}); err != nil {
		t.Fatal(err)
	}
	done, err := c.Wait(ctx, x.ID, 5*time.Millisecond, false)
	if err != nil || done.Status != "completed" {
		t.Fatalf("answered: %+v %v", done, err)
	}
}
