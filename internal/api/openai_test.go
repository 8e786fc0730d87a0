package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
	"github.com/agentplane/agentplane/internal/llm/simulated"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
)

// openAIEnv is a server whose agents call a fake OpenAI provider, with an agent "Helper"
// (a system prompt) and an agent "Gate" that waits for approval before its output.
type openAIEnv struct {
	*testEnv
	fake         *llmtest.Server
	helper, gate *client.Agent
}

func newOpenAIEnv(t *testing.T) *openAIEnv {
	t.Helper()
	st, err := store.Open(context.Background(), "memory")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := newTestEnv(t, onStore(st), asServer(), withRouter(func(st *store.Store, box *secretbox.Box) runtime.ModelRouter {
		return &runtime.CredentialRouter{Store: st, Secrets: box, Simulated: simulated.New()}
	}))
	fake := llmtest.NewOpenAI()
	t.Cleanup(fake.Close)
	fake.Fallback = func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: []string{"Hi ", "there."}, Usage: &llmtest.Usage{Prompt: 12, Completion: 3}}
	}
	ctx := context.Background()
	if _, err := e.c.CredentialCreate(ctx, client.CredentialCreateRequest{Name: "openai", Type: "api_key", Provider: "openai",
		Value: "sk-test000000000000000000000000000000wxyz", Metadata: map[string]any{"base_url": fake.URL}}); err != nil {
		t.Fatal(err)
	}
	helper, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Helper", Type: "simple", Description: "Answers questions.",
		Config: client.AgentConfig{Model: "gpt-4o-mini", SystemPrompt: "You are Helper."}})
	if err != nil {
		t.Fatal(err)
	}
	gate, err := e.c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Gate", Type: "approval", Config: client.AgentConfig{Model: "gpt-4o-mini",
		Approval: client.ApprovalConfig{Checkpoints: []client.Checkpoint{{Name: "review", When: "before_output"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return &openAIEnv{testEnv: e, fake: fake, helper: helper, gate: gate}
}

// lastMessages is what the fake provider was last sent as messages: role and content.
func (o *openAIEnv) lastMessages(t *testing.T) [][2]string {
	t.Helper()
	reqs := o.fake.Requests()
	if len(reqs) == 0 {
		t.Fatal("the provider got no request")
	}
	var out [][2]string
	for _, m := range reqs[len(reqs)-1].Body["messages"].([]any) {
		mm := m.(map[string]any)
		content, _ := mm["content"].(string)
		out = append(out, [2]string{mm["role"].(string), content})
	}
	return out
}

// stream posts a streamed request and returns the data lines of the answer.
func (o *openAIEnv) stream(t *testing.T, path, idemKey, body string) (*http.Response, []string) {
	t.Helper()
	req, _ := http.NewRequest("POST", o.ts.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+o.key)
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var data []string
	for _, line := range strings.Split(string(raw), "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data = append(data, d)
		}
	}
	return resp, data
}

const chatPath = "/api/v1/openai/chat/completions"

func TestOpenAIChatCompletions(t *testing.T) {
	t.Parallel()
	o := newOpenAIEnv(t)
	var xid string
	o.run([]scenario{
		{name: "models", method: "GET", path: "/api/v1/openai/models", status: 200, raw: true,
			fields: map[string]any{"object": "list", "data.1.id": o.helper.ID, "data.1.object": "model", "data.1.owned_by": o.ws, "data.1.name": "Helper"}},
		{name: "completion by name", method: "POST", path: chatPath, status: 200, raw: true,
			body: `{"model":"Helper","user":"u-1","metadata":{"team":"blue"},"messages":[{"role":"system","content":"Be brief."},` +
				`{"role":"user","content":"Hello"},{"role":"assistant","content":"Hi, how can I help?"},{"role":"user","content":[{"type":"text","text":"Who are you?"}]}]}`,
			fields: map[string]any{"object": "chat.completion", "model": "Helper", "choices.0.message.role": "assistant", "choices.0.message.content": "Hi there.",
				"choices.0.finish_reason": "stop", "usage.prompt_tokens": 12, "usage.completion_tokens": 3, "usage.total_tokens": 15},
			check: func(t *testing.T, b map[string]any) {
				xid = b["execution_id"].(string)
				if b["id"] != "chatcmpl-"+xid {
					t.Fatalf("id %v, want chatcmpl-%s", b["id"], xid)
				}
				want := [][2]string{{"system", "You are Helper."}, {"system", "Be brief."}, {"user", "Hello"}, {"assistant", "Hi, how can I help?"}, {"user", "Who are you?"}}
				if got := o.lastMessages(t); !jsonEqual(got, want) {
					t.Fatalf("the model was sent %v, want %v", got, want)
				}
			}},
	})
	o.fake.Push(llmtest.Reply{Text: []string{`{"answer":`, `"yes"}`}})
	o.run([]scenario{
		{name: "json schema", method: "POST", path: chatPath, status: 200, raw: true,
			body: `{"model":"Helper","messages":[{"role":"user","content":"Hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}}}}`,
			check: func(t *testing.T, b map[string]any) {
				var out map[string]any
				if err := json.Unmarshal([]byte(lookup(b, "choices.0.message.content").(string)), &out); err != nil || out["answer"] != "yes" {
					t.Fatalf("content %v is not the structured output", lookup(b, "choices.0.message.content"))
				}
			}},
		{name: "the execution", method: "GET", path: "/api/v1/executions/" + xid, status: 200,
			fields: map[string]any{"data.source": "openai", "data.end_user_id": "u-1", "data.metadata.team": "blue", "data.input.message": "Who are you?",
				"data.status": "completed", "data.agent_version_id": *o.helper.ActiveVersionID}},
		{name: "by id and version", method: "POST", path: chatPath, status: 200, raw: true,
			body: `{"model":"` + o.helper.ID + `@1","messages":[{"role":"user","content":"Hi"}]}`, fields: map[string]any{"model": o.helper.ID + "@1"}},
		{name: "no key", method: "POST", path: chatPath, header: map[string]string{"X-API-Key": ""}, status: 401, raw: true,
			body: `{"model":"Helper","messages":[{"role":"user","content":"Hi"}]}`, fields: map[string]any{"error.type": "authentication_error", "error.code": "unauthorized"}},
		{name: "unknown model", method: "POST", path: chatPath, status: 404, raw: true, body: `{"model":"nobody","messages":[{"role":"user","content":"Hi"}]}`,
			fields: map[string]any{"error.type": "not_found_error", "error.code": "not_found"}},
		{name: "unknown version", method: "POST", path: chatPath, status: 404, raw: true, body: `{"model":"Helper@9","messages":[{"role":"user","content":"Hi"}]}`,
			fields: map[string]any{"error.type": "not_found_error"}},
		{name: "bad version", method: "POST", path: chatPath, status: 422, raw: true, body: `{"model":"Helper@x","messages":[{"role":"user","content":"Hi"}]}`,
			fields: map[string]any{"error.type": "invalid_request_error", "error.param": "model"}},
		{name: "last not user", method: "POST", path: chatPath, status: 422, raw: true, body: `{"model":"Helper","messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"x"}]}`,
			fields: map[string]any{"error.code": "validation_error", "error.param": "messages[1].role"}},
		{name: "no messages", method: "POST", path: chatPath, status: 422, raw: true, body: `{"model":"Helper","messages":[]}`, fields: map[string]any{"error.param": "messages"}},
		{name: "image part", method: "POST", path: chatPath, status: 422, raw: true,
			body: `{"model":"Helper","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, fields: map[string]any{"error.param": "messages[0].content[0].type"}},
		{name: "client tools", method: "POST", path: chatPath, status: 422, raw: true,
			body: `{"model":"Helper","tools":[{"type":"function","function":{"name":"f"}}],"messages":[{"role":"user","content":"Hi"}]}`, fields: map[string]any{"error.param": "tools"}},
		{name: "bad schema", method: "POST", path: chatPath, status: 422, raw: true,
			body:   `{"model":"Helper","messages":[{"role":"user","content":"Hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"a","schema":{"type":12}}}}`,
			fields: map[string]any{"error.param": "response_format.json_schema.schema"}},
		{name: "malformed", method: "POST", path: chatPath, status: 400, raw: true, body: `{"model":`, fields: map[string]any{"error.type": "invalid_request_error"}},
		{name: "approval", method: "POST", path: chatPath, status: 409, raw: true, body: `{"model":"Gate","messages":[{"role":"user","content":"Refund me"}]}`,
			fields: map[string]any{"error.code": "approval_required", "error.type": "conflict_error"},
			check: func(t *testing.T, b map[string]any) {
				id, _ := lookup(b, "error.execution_id").(string)
				x, err := o.c.ExecutionGet(context.Background(), id)
				if err != nil || x.Status != "awaiting_approval" || !strings.Contains(lookup(b, "error.message").(string), id) {
					t.Fatalf("the error names %q: %+v %v", id, x, err)
				}
			}},
	})
}

func TestOpenAIChatStream(t *testing.T) {
	t.Parallel()
	o := newOpenAIEnv(t)
	body := `{"model":"Helper","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Hi"}]}`
	resp, data := o.stream(t, chatPath, "stream-1", body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, type %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if len(data) < 4 || data[len(data)-1] != "[DONE]" {
		t.Fatalf("stream %q does not end in [DONE]", data)
	}
	var text strings.Builder
	var id string
	for i, d := range data[:len(data)-1] {
		var c struct {
			ID      string `json:"id"`
			Object  string `json:"object"`
			Choices []struct {
				Delta struct {
					Role    string `json:"role"`
					Content string `json:"content"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *OpenAIUsage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(d), &c); err != nil || c.Object != "chat.completion.chunk" {
			t.Fatalf("chunk %d %s: %v", i, d, err)
		}
		id = c.ID
		last := i == len(data)-2
		if last != (c.Usage != nil) || last != (len(c.Choices) == 0) {
			t.Fatalf("chunk %d: usage %v with %d choices", i, c.Usage, len(c.Choices))
		}
		if last {
			if c.Usage.TotalTokens != 15 {
				t.Fatalf("usage %+v", c.Usage)
			}
			continue
		}
		if i == 0 && c.Choices[0].Delta.Role != "assistant" {
			t.Fatalf("first chunk %s has no role", d)
		}
		text.WriteString(c.Choices[0].Delta.Content)
		if fr := c.Choices[0].FinishReason; (fr != nil) != (i == len(data)-3) {
			t.Fatalf("chunk %d finish_reason %v", i, fr)
		}
	}
	if text.String() != "Hi there." || !strings.HasPrefix(id, "chatcmpl-") {
		t.Fatalf("text %q, id %s", text.String(), id)
	}
	x, err := o.c.ExecutionGet(context.Background(), strings.TrimPrefix(id, "chatcmpl-"))
	if err != nil || x.Source != "openai" || x.Status != "completed" {
		t.Fatalf("execution %+v %v", x, err)
	}

	t.Run("idempotent replay", func(t *testing.T) {
		again, data2 := o.stream(t, chatPath, "stream-1", body)
		if again.Header.Get("Idempotent-Replayed") != "true" || !strings.HasPrefix(again.Header.Get("Content-Type"), "text/event-stream") || !jsonEqual(data, data2) {
			t.Fatalf("replay %v: %q", again.Header, data2)
		}
		if _, n, _ := o.store.ExecutionList(context.Background(), o.ws, domain.ExecutionFilter{Source: "openai"}, domain.Page{Page: 1, Limit: 10}); n != 1 {
			t.Fatalf("%d openai executions after a replay, want 1", n)
		}
	})
	t.Run("approval ends the stream", func(t *testing.T) {
		_, data := o.stream(t, chatPath, "", `{"model":"Gate","stream":true,"messages":[{"role":"user","content":"Refund me"}]}`)
		last := data[len(data)-1]
		var e OpenAIErrorBody
		if err := json.Unmarshal([]byte(last), &e); err != nil || e.Error.Code != "approval_required" || e.Error.ExecutionID == "" {
			t.Fatalf("stream ends with %s", last)
		}
	})
	t.Run("failed run", func(t *testing.T) {
		o.fake.Push(llmtest.Reply{Status: 400, ErrorMessage: "bad things"})
		_, data := o.stream(t, chatPath, "", `{"model":"Helper","stream":true,"messages":[{"role":"user","content":"Hi"}]}`)
		var e OpenAIErrorBody
		if err := json.Unmarshal([]byte(data[len(data)-1]), &e); err != nil || e.Error.Type != "server_error" || e.Error.ExecutionID == "" {
			t.Fatalf("stream ends with %q", data)
		}
	})
}

func TestOpenAIResponses(t *testing.T) {
	t.Parallel()
	o := newOpenAIEnv(t)
	const path = "/api/v1/openai/responses"
	var first, session, firstTurn string
	o.run([]scenario{
		{name: "first turn", method: "POST", path: path, status: 200, raw: true,
			body: `{"model":"Helper","instructions":"Be brief.","input":"My name is Ada.","user":"u-9"}`,
			fields: map[string]any{"object": "response", "status": "completed", "output.0.type": "message", "output.0.content.0.type": "output_text", "output.0.content.0.text": "Hi there.",
				"usage.input_tokens": 12, "usage.output_tokens": 3, "store": true, "previous_response_id": nil},
			check: func(t *testing.T, b map[string]any) {
				first, session = b["id"].(string), b["session_id"].(string)
				firstTurn = first
				if first != "resp_"+b["execution_id"].(string) {
					t.Fatalf("id %s", first)
				}
				want := [][2]string{{"system", "You are Helper."}, {"system", "Be brief."}, {"user", "My name is Ada."}}
				if got := o.lastMessages(t); !jsonEqual(got, want) {
					t.Fatalf("the model was sent %v, want %v", got, want)
				}
			}},
	})
	o.run([]scenario{
		{name: "the session", method: "GET", path: "/api/v1/chat/sessions/" + session, status: 200,
			fields: map[string]any{"data.agent_id": o.helper.ID, "data.end_user_id": "u-9", "data.message_count": 2}},
		{name: "second turn", method: "POST", path: path, status: 200, raw: true,
			body:   `{"model":"Helper","input":[{"role":"user","content":[{"type":"input_text","text":"What is my name?"}]}],"previous_response_id":"` + first + `"}`,
			fields: map[string]any{"previous_response_id": first, "session_id": session},
			check: func(t *testing.T, b map[string]any) {
				want := [][2]string{{"system", "You are Helper."}, {"user", "My name is Ada."}, {"assistant", "Hi there."}, {"user", "What is my name?"}}
				if got := o.lastMessages(t); !jsonEqual(got, want) {
					t.Fatalf("the model was sent %v, want %v", got, want)
				}
			}},
		{name: "not stored", method: "POST", path: path, status: 200, raw: true, body: `{"model":"Helper","input":"Hi","store":false}`,
			fields: map[string]any{"store": false, "session_id": nil},
			check:  func(t *testing.T, b map[string]any) { first = b["id"].(string) }},
	})
	o.run([]scenario{
		{name: "continue unstored", method: "POST", path: path, status: 404, raw: true, body: `{"model":"Helper","input":"Hi","previous_response_id":"` + first + `"}`,
			fields: map[string]any{"error.type": "not_found_error"}},
		{name: "unknown previous", method: "POST", path: path, status: 404, raw: true, body: `{"model":"Helper","input":"Hi","previous_response_id":"resp_nope"}`},
		{name: "store false with previous", method: "POST", path: path, status: 422, raw: true, body: `{"model":"Helper","input":"Hi","store":false,"previous_response_id":"resp_x"}`,
			fields: map[string]any{"error.param": "previous_response_id"}},
		{name: "bad input", method: "POST", path: path, status: 400, raw: true, body: `{"model":"Helper","input":12}`},
		{name: "function call item", method: "POST", path: path, status: 422, raw: true, body: `{"model":"Helper","input":[{"type":"function_call_output","call_id":"c","output":"x"}]}`,
			fields: map[string]any{"error.param": "input[0].type"}},
		{name: "other agent", method: "POST", path: path, status: 422, raw: true, body: `{"model":"Gate","input":"Hi","previous_response_id":"` + firstTurn + `"}`,
			fields: map[string]any{"error.param": "model"}},
	})

	// A first response whose input holds earlier messages: the session keeps them all, so the
	// next turn's history has them.
	var convo, convoSession string
	o.run([]scenario{
		{name: "input with earlier messages", method: "POST", path: path, status: 200, raw: true,
			body: `{"model":"Helper","input":[{"role":"user","content":"I live in Oslo."},{"role":"assistant","content":"Noted."},{"role":"user","content":"Where do I live?"}]}`,
			check: func(t *testing.T, b map[string]any) {
				convo, convoSession = b["id"].(string), b["session_id"].(string)
				want := [][2]string{{"system", "You are Helper."}, {"user", "I live in Oslo."}, {"assistant", "Noted."}, {"user", "Where do I live?"}}
				if got := o.lastMessages(t); !jsonEqual(got, want) {
					t.Fatalf("the model was sent %v, want %v", got, want)
				}
			}},
	})
	o.run([]scenario{
		{name: "its session keeps the whole input", method: "GET", path: "/api/v1/chat/sessions/" + convoSession, status: 200,
			fields: map[string]any{"data.message_count": 4}},
		{name: "continued", method: "POST", path: path, status: 200, raw: true,
			body: `{"model":"Helper","input":"And my name?","previous_response_id":"` + convo + `"}`,
			check: func(t *testing.T, b map[string]any) {
				want := [][2]string{{"system", "You are Helper."}, {"user", "I live in Oslo."}, {"assistant", "Noted."}, {"user", "Where do I live?"},
					{"assistant", "Hi there."}, {"user", "And my name?"}}
				if got := o.lastMessages(t); !jsonEqual(got, want) {
					t.Fatalf("the model was sent %v, want %v", got, want)
				}
			}},
	})

	t.Run("stream", func(t *testing.T) {
		req, _ := http.NewRequest("POST", o.ts.URL+path, strings.NewReader(`{"model":"Helper","input":"Hi","stream":true}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+o.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var types []string
		var text strings.Builder
		for _, f := range strings.Split(strings.TrimSpace(string(raw)), "\n\n") {
			if strings.HasPrefix(f, ":") {
				continue // a keep-alive comment (": ping"), sent when the run is slow to answer
			}
			ev, data, _ := strings.Cut(f, "\n")
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(data, "data: ")), &d); err != nil || "event: "+d["type"].(string) != ev {
				t.Fatalf("frame %q: %v", f, err)
			}
			types = append(types, d["type"].(string))
			if d["type"] == "response.output_text.delta" {
				text.WriteString(d["delta"].(string))
			}
		}
		want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
			"response.output_text.delta", "response.output_text.delta", "response.output_text.done", "response.content_part.done",
			"response.output_item.done", "response.completed"}
		if !jsonEqual(types, want) || text.String() != "Hi there." {
			t.Fatalf("events %v, text %q", types, text.String())
		}
	})
}

// TestOpenAIEmulator: the emulator serves the same routes, on its simulated model.
func TestOpenAIEmulator(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	a, err := e.c.AgentCreate(context.Background(), client.AgentCreateRequest{Name: "Echo", Type: "simple", Config: client.AgentConfig{Model: "gpt-4o-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	e.run([]scenario{
		{name: "models", method: "GET", path: "/api/v1/openai/models", status: 200, raw: true, fields: map[string]any{"data.0.id": a.ID}},
		{name: "completion", method: "POST", path: chatPath, status: 200, raw: true, body: `{"model":"Echo","messages":[{"role":"user","content":"Hi"}]}`,
			fields: map[string]any{"object": "chat.completion", "choices.0.finish_reason": "stop"}},
		{name: "response", method: "POST", path: "/api/v1/openai/responses", status: 200, raw: true, body: `{"model":"Echo","input":"Hi"}`,
			fields: map[string]any{"object": "response", "status": "completed"}},
	})
}
