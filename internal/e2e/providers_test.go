package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
	"github.com/agentplane/agentplane/internal/mcpclient/mcptest"
)

// wire is one provider protocol as `serve` reaches it: a fake server speaking the wire
// format, the credential pointing at it, and how to read tool results out of a request.
type wire struct {
	provider string // the credential's provider
	model    string // a catalog model of that provider
	fake     *llmtest.Server
	baseURL  string
	key      string
	// toolResults returns the call ids the tool results of a request answer, in order.
	toolResults func(body map[string]any) []string
	// userTurns returns the text of the request's user turns, in order.
	userTurns func(body map[string]any) []string
}

func wires() []*wire {
	oa, an, ge := llmtest.NewOpenAI(), llmtest.NewAnthropic(), llmtest.NewGemini()
	return []*wire{
		{provider: "openai", model: "gpt-4o-mini", fake: oa, baseURL: oa.URL + "/v1", key: "sk-proj-e2eOPENAIsecret0000000000000000wxyz",
			toolResults: func(b map[string]any) (ids []string) {
				for _, m := range items(b["messages"]) {
					if m["role"] == "tool" {
						ids = append(ids, str(m["tool_call_id"]))
					}
				}
				return ids
			},
			userTurns: func(b map[string]any) (out []string) {
				for _, m := range items(b["messages"]) {
					if m["role"] == "user" {
						out = append(out, textOf(m["content"]))
					}
				}
				return out
			}},
		{provider: "anthropic", model: "claude-3-5-haiku-20241022", fake: an, baseURL: an.URL, key: "sk-ant-api03-e2eANTHROPICsecret000000000-0000AA",
			toolResults: func(b map[string]any) (ids []string) {
				for _, m := range items(b["messages"]) {
					for _, blk := range items(m["content"]) {
						if blk["type"] == "tool_result" {
							ids = append(ids, str(blk["tool_use_id"]))
						}
					}
				}
				return ids
			},
			userTurns: func(b map[string]any) (out []string) {
				for _, m := range items(b["messages"]) {
					if m["role"] != "user" {
						continue
					}
					for _, blk := range items(m["content"]) {
						if blk["type"] == "text" {
							out = append(out, str(blk["text"]))
						}
					}
				}
				return out
			}},
		{provider: "google", model: "gemini-2.5-flash", fake: ge, baseURL: ge.URL, key: "AIzaE2EGEMINIsecret000000000000000000wxyz",
			toolResults: func(b map[string]any) (ids []string) {
				for _, c := range items(b["contents"]) {
					for _, p := range items(c["parts"]) {
						if fr, ok := p["functionResponse"].(map[string]any); ok {
							ids = append(ids, str(fr["id"]))
						}
					}
				}
				return ids
			},
			userTurns: func(b map[string]any) (out []string) {
				for _, c := range items(b["contents"]) {
					if c["role"] != "user" {
						continue
					}
					for _, p := range items(c["parts"]) {
						if t, ok := p["text"].(string); ok {
							out = append(out, t)
						}
					}
				}
				return out
			}},
	}
}

func items(v any) []map[string]any {
	var out []map[string]any
	list, _ := v.([]any)
	for _, x := range list {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func str(v any) string { s, _ := v.(string); return s }

// textOf reads a Chat Completions content: a string or a list of text parts.
func textOf(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	var b strings.Builder
	for _, p := range items(v) {
		b.WriteString(str(p["text"]))
	}
	return b.String()
}

// frames replays an execution's stored frames from the first.
func frames(t *testing.T, c *client.Client, id string) []client.StreamEvent {
	t.Helper()
	s, err := c.ExecutionStream(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := s.Collect()
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func contentOf(evs []client.StreamEvent, kind string) []string {
	var out []string
	for _, ev := range evs {
		if ev.Event == kind {
			var d struct{ Content string }
			_ = json.Unmarshal([]byte(ev.Data), &d)
			out = append(out, d.Content)
		}
	}
	return out
}

func count(evs []client.StreamEvent, kind string) int {
	n := 0
	for _, ev := range evs {
		if ev.Event == kind {
			n++
		}
	}
	return n
}

func outputText(x *client.Execution) string {
	var o struct{ Content string }
	_ = json.Unmarshal(x.Output, &o)
	return o.Content
}

// TestServeRunsRealProviders runs `serve` on SQLite with real models: credentials point at
// fake servers speaking the OpenAI, Anthropic and Gemini wire formats, and simple, agent,
// chain and chat runs go through them with their frames, usage and cost.
func TestServeRunsRealProviders(t *testing.T) {
	t.Parallel()
	dir := dataDir(t)
	env := serveEnv(dir)
	delete(env, "MODELS") // the default: real models
	env["LOG_LEVEL"] = "debug"
	p := start(t, env, "serve")
	c := p.C
	ctx := context.Background()
	if h, err := c.Health(ctx); err != nil || h.Models != "real" {
		t.Fatalf("health: %+v %v", h, err)
	}
	ws := wires()
	for _, w := range ws {
		t.Cleanup(w.fake.Close)
	}
	creds := map[string]*client.Credential{}
	for _, w := range ws {
		cr, err := c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "prod-" + w.provider, Type: "api_key", Provider: w.provider,
			Value: w.key, Metadata: map[string]any{"base_url": w.baseURL}})
		if err != nil {
			t.Fatal(err)
		}
		creds[w.provider] = cr
	}
	secrets := []string{}
	for _, w := range ws {
		secrets = append(secrets, w.key)
	}
	orders := mcptest.New(mcptest.StreamableHTTP)
	defer orders.Close()
	tool, err := c.MCPToolCreate(ctx, client.McpToolCreateRequest{Name: "Orders", Transport: "http", URL: orders.Endpoint,
		Tools: []client.MCPToolDef{{Name: "lookup_order", Description: "Look up an order by id",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}`)}}})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("wires", func(t *testing.T) {
		for _, w := range ws {
			t.Run(w.provider, func(t *testing.T) {
				t.Parallel()
				model, err := c.LLMModelGet(ctx, w.model)
				if err != nil {
					t.Fatal(err)
				}
				cost := func(prompt, completion int) float64 {
					return (float64(prompt)*model.InputPricePerMillion + float64(completion)*model.OutputPricePerMillion) / 1e6
				}
				checkUsage := func(t *testing.T, x *client.Execution, prompt, completion int) {
					t.Helper()
					if client.Val(x.TokenUsage.PromptTokens) != int64(prompt) || client.Val(x.TokenUsage.CompletionTokens) != int64(completion) || client.Val(x.TokenUsage.TotalTokens) != int64(prompt+completion) {
						t.Errorf("token_usage %+v, want %d + %d", x.TokenUsage, prompt, completion)
					}
					if want := cost(prompt, completion); math.Abs(x.Cost-want) > 1e-12 {
						t.Errorf("cost %v, want %v", x.Cost, want)
					}
				}

				t.Run("simple", func(t *testing.T) {
					w.fake.Push(llmtest.Reply{Reasoning: []string{"The user greets me."}, Text: []string{"Hello", ", ", "world!"},
						Usage: &llmtest.Usage{Prompt: 20, Completion: 7, Cached: 4, Reasoning: 2}})
					a := mustAgent(t, c, "simple", client.AgentConfig{Model: w.model, SystemPrompt: "You greet people."})
					x, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "Say hello"}})
					if err != nil || x.Status != "completed" {
						t.Fatalf("execute: %+v %v", x, err)
					}
					if got := outputText(x); got != "Hello, world!" {
						t.Errorf("output %q", got)
					}
					checkUsage(t, x, 20, 7)
					evs := frames(t, c, x.ID)
					if got := contentOf(evs, "content"); strings.Join(got, "|") != "Hello|, |world!" {
						t.Errorf("content frames %q", got)
					}
					if got := contentOf(evs, "thinking"); len(got) == 0 || strings.Join(got, "") != "The user greets me." {
						t.Errorf("thinking frames %q", got)
					}
					if evs[len(evs)-1].Event != "done" {
						t.Errorf("last frame %+v", evs[len(evs)-1])
					}
					tr, err := c.TraceGet(ctx, x.TraceID)
					if err != nil {
						t.Fatal(err)
					}
					var call *client.SpanNode
					for _, sp := range tr.AllSpans() {
						if sp.Kind == "llm" {
							call = sp
						}
					}
					if call == nil || call.Attributes["provider"] != w.provider || call.Attributes["credential"] != "prod-"+w.provider ||
						call.Attributes["cached_tokens"] != float64(4) || call.Attributes["usage_estimated"] != nil {
						t.Fatalf("model call span %+v", call)
					}
					if w.provider != "anthropic" && call.Attributes["reasoning_tokens"] != float64(2) {
						t.Errorf("reasoning tokens on the span: %v", call.Attributes)
					}
					if atts, _ := call.Attributes["attempts"].([]any); len(atts) != 1 {
						t.Errorf("attempts %v", call.Attributes["attempts"])
					}
					reqs := w.fake.Requests()
					if got := w.userTurns(reqs[len(reqs)-1].Body); len(got) != 1 || got[0] != "Say hello" {
						t.Errorf("user turns sent %q", got)
					}
				})

				t.Run("agent tool loop", func(t *testing.T) {
					w.fake.Push(
						llmtest.Reply{ToolCalls: []llmtest.ToolCall{
							{ID: "call_a", Name: "lookup_order", Args: []string{`{"order_id":`, ` "A-17"}`}},
							{ID: "call_b", Name: "lookup_order", Args: []string{`{"order_`, `id": "B-2"}`}},
						}, Usage: &llmtest.Usage{Prompt: 50, Completion: 12}},
						llmtest.Reply{Text: []string{"Both orders ", "shipped."}, Usage: &llmtest.Usage{Prompt: 90, Completion: 5}},
					)
					a := mustAgent(t, c, "agent", client.AgentConfig{Model: w.model, Tools: client.MCPTools(tool.ID)})
					before := len(w.fake.Requests())
					x, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "Where are orders A-17 and B-2?"}})
					if err != nil || x.Status != "completed" || outputText(x) != "Both orders shipped." {
						t.Fatalf("execute: %+v %v", x, err)
					}
					checkUsage(t, x, 140, 17)
					evs := frames(t, c, x.ID)
					if count(evs, "tool_start") != 2 || count(evs, "tool_end") != 2 {
						t.Errorf("tool frames: %d start, %d end", count(evs, "tool_start"), count(evs, "tool_end"))
					}
					reqs := w.fake.Requests()[before:]
					if len(reqs) != 2 {
						t.Fatalf("%d model requests", len(reqs))
					}
					if got := w.toolResults(reqs[1].Body); strings.Join(got, ",") != "call_a,call_b" {
						t.Errorf("tool results answer %q; body %s", got, reqs[1].Raw)
					}
				})

				t.Run("chain", func(t *testing.T) {
					w.fake.Push(llmtest.Reply{Text: []string{"Draft ", "one."}, Usage: &llmtest.Usage{Prompt: 10, Completion: 2}},
						llmtest.Reply{Text: []string{"Polished ", "one."}, Usage: &llmtest.Usage{Prompt: 12, Completion: 2}})
					a := mustAgent(t, c, "chain", client.AgentConfig{Model: w.model,
						Steps: []client.AgentStep{{ID: "draft", Instruction: "Draft a reply."}, {ID: "polish", Instruction: "Polish it."}}})
					before := len(w.fake.Requests())
					x, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "A customer asks for a refund."}})
					if err != nil || x.Status != "completed" || outputText(x) != "Polished one." {
						t.Fatalf("execute: %+v %v", x, err)
					}
					checkUsage(t, x, 22, 4)
					if got := contentOf(frames(t, c, x.ID), "content"); strings.Join(got, "") != "Polished one." {
						t.Errorf("content frames %q: only the last step streams", got)
					}
					reqs := w.fake.Requests()[before:]
					if len(reqs) != 2 || w.userTurns(reqs[1].Body)[0] != "Draft one." {
						t.Errorf("the second step did not get the first's output: %d requests", len(reqs))
					}
				})

				t.Run("chat", func(t *testing.T) {
					w.fake.Push(llmtest.Reply{Text: []string{"Hi ", "Ada."}, Usage: &llmtest.Usage{Prompt: 8, Completion: 2}},
						llmtest.Reply{Text: []string{"You are ", "Ada."}, Usage: &llmtest.Usage{Prompt: 16, Completion: 3}})
					a := mustAgent(t, c, "simple", client.AgentConfig{Model: w.model})
					sess, err := c.ChatSessionCreate(ctx, a.ID, "", nil)
					if err != nil {
						t.Fatal(err)
					}
					reply, err := c.ChatSend(ctx, sess.ID, "I am Ada.")
					if err != nil || reply.Content != "Hi Ada." {
						t.Fatalf("reply %+v %v", reply, err)
					}
					st, err := c.ChatStream(ctx, sess.ID, "Who am I?")
					if err != nil {
						t.Fatal(err)
					}
					evs, err := st.Collect()
					if err != nil || strings.Join(contentOf(evs, "content"), "|") != "You are |Ada." || evs[len(evs)-1].Event != "done" {
						t.Fatalf("chat stream %+v %v", evs, err)
					}
					reqs := w.fake.Requests()
					if got := w.userTurns(reqs[len(reqs)-1].Body); strings.Join(got, "|") != "I am Ada.|Who am I?" {
						t.Errorf("history sent %q", got)
					}
					msgs, err := c.ChatMessageList(ctx, sess.ID, client.ListChatMessagesParams{})
					if err != nil || msgs.Pagination.Total != 4 || msgs.Data[3].Content != "You are Ada." {
						t.Fatalf("messages %+v %v", msgs, err)
					}
				})

				t.Run("validate", func(t *testing.T) {
					v, err := c.CredentialValidate(ctx, creds[w.provider].ID)
					if err != nil || !v.Valid || v.Status != 200 {
						t.Fatalf("validate: %+v %v", v, err)
					}
					bad, err := c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "bad-" + w.provider, Type: "api_key", Provider: w.provider,
						Value: "bad-" + w.key, Metadata: map[string]any{"base_url": w.baseURL}})
					if err != nil {
						t.Fatal(err)
					}
					v, err = c.CredentialValidate(ctx, bad.ID)
					wantStatus := 401
					if w.provider == "google" {
						wantStatus = 400 // Gemini's answer to an invalid key: 400 API_KEY_INVALID
					}
					if err != nil || v.Valid || v.Status != int64(wantStatus) || v.Message == "" || strings.Contains(v.Message, w.key) {
						t.Fatalf("bad key: %+v %v", v, err)
					}
					got, _ := c.CredentialGet(ctx, bad.ID)
					if got.Valid == nil || *got.Valid || got.LastValidatedAt == nil {
						t.Fatalf("stored validation %+v", got)
					}
					// A run on the rejected key fails naming the provider, the credential and the status.
					a := mustAgent(t, c, "simple", client.AgentConfig{Model: w.model, CredentialID: bad.ID})
					x, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "hi"}})
					if err != nil || x.Status != "failed" || x.Error == nil ||
						!strings.HasPrefix(*x.Error, w.provider+` rejected credential "bad-`+w.provider+`" (`) {
						t.Fatalf("rejected run: %+v %v", x, err)
					}
					if _, err := c.CredentialDelete(ctx, bad.ID); err != nil {
						t.Fatal(err)
					}
				})
			})
		}
	})

	t.Run("cancel closes the upstream request", func(t *testing.T) {
		w := ws[0]
		w.fake.Push(llmtest.Reply{Text: []string{"one ", "two ", "three ", "four ", "five"}, Delay: 300 * time.Millisecond})
		a := mustAgent(t, c, "simple", client.AgentConfig{Model: w.model})
		x, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "count"}, Async: client.Ptr(true)})
		if err != nil {
			t.Fatal(err)
		}
		st, err := c.ExecutionStream(ctx, x.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for {
			ev, ok, err := st.Next()
			if err != nil || !ok {
				t.Fatalf("stream ended before content: %v", err)
			}
			if ev.Event == "content" {
				break
			}
		}
		sent := time.Now()
		if x, err = c.ExecutionCancel(ctx, x.ID); err != nil || x.Status != "cancelled" {
			t.Fatalf("cancel: %+v %v", x, err)
		}
		select {
		case gone := <-w.fake.ClientGone():
			if d := gone.Sub(sent); d > 100*time.Millisecond {
				t.Errorf("the provider saw the connection close %v after the cancel", d)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("the provider never saw the connection close")
		}
	})

	t.Run("request timeout", func(t *testing.T) {
		w := ws[1]
		w.fake.Push(llmtest.Reply{Text: []string{"too ", "slow"}, Delay: 400 * time.Millisecond})
		a := mustAgent(t, c, "simple", client.AgentConfig{Model: w.model, RequestTimeoutMs: 100})
		x, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "hurry"}})
		if err != nil || x.Status != "failed" || x.Error == nil || !strings.Contains(*x.Error, "did not finish within 100 ms (config.request_timeout_ms)") {
			t.Fatalf("timeout: %+v %v", x, err)
		}
	})

	t.Run("retries until the provider answers", func(t *testing.T) {
		w := ws[2]
		w.fake.Push(llmtest.Reply{Status: 503, ErrorMessage: "overloaded", Header: http.Header{"Retry-After": {"0.05"}}},
			llmtest.Reply{Text: []string{"fine"}, Usage: &llmtest.Usage{Prompt: 3, Completion: 1}})
		a := mustAgent(t, c, "simple", client.AgentConfig{Model: w.model})
		x, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "again"}})
		if err != nil || x.Status != "completed" || outputText(x) != "fine" {
			t.Fatalf("after a 503: %+v %v", x, err)
		}
		// With max_retries 0 the same 503 fails the run with the provider's message.
		w.fake.Push(llmtest.Reply{Status: 503, ErrorMessage: "overloaded"})
		a = mustAgent(t, c, "simple", client.AgentConfig{Model: w.model, MaxRetries: client.Ptr[int64](0)})
		x, err = c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "again"}})
		if err != nil || x.Status != "failed" || x.Error == nil || !strings.Contains(*x.Error, "google (503): overloaded") {
			t.Fatalf("no retries: %+v %v", x, err)
		}
	})

	t.Run("credential deleted while a run waits", func(t *testing.T) {
		w := ws[0]
		w.fake.Push(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_x", Name: "lookup_order", Args: []string{`{"order_id":"X"}`}}}})
		a := mustAgent(t, c, "agent", client.AgentConfig{Model: w.model, Tools: client.MCPTools(tool.ID),
			Approval: client.ApprovalConfig{Checkpoints: []client.Checkpoint{{Name: "tools", When: "before_tools"}}}})
		x, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "Where is order X?"}})
		if err != nil || x.Status != "awaiting_approval" {
			t.Fatalf("execute: %+v %v", x, err)
		}
		if _, err := c.CredentialDelete(ctx, creds[w.provider].ID); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ExecutionApprove(ctx, x.ID, "go"); err != nil {
			t.Fatal(err)
		}
		x, err = c.Wait(ctx, x.ID, 20*time.Millisecond, false)
		if err != nil || x.Status != "failed" || x.Error == nil ||
			!strings.Contains(*x.Error, "no credential for provider openai in this workspace: add one in Studio") {
			t.Fatalf("after the credential went: %+v %v", x, err)
		}
		// And a new run is refused before anything is recorded.
		_, err = c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "again"}})
		var apiErr *client.Error
		if !errors.As(err, &apiErr) || apiErr.Status != 422 || !strings.Contains(apiErr.Message, "no credential for provider openai") {
			t.Fatalf("execute without a credential: %v", err)
		}
	})

	// No credential value was ever written to the database files or the log.
	p.stop(t)
	assertNoSecrets(t, dir, p.Logs(), secrets)
}

// assertNoSecrets fails if any of secrets appears in a file under dir or in logs.
func assertNoSecrets(t *testing.T, dir, logs string, secrets []string) {
	t.Helper()
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			if strings.Contains(string(raw), s) {
				t.Errorf("%s holds a credential value", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if strings.Contains(logs, s) {
			t.Errorf("the log holds a credential value")
		}
	}
}
