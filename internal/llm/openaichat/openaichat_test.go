package openaichat_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"testing"

	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
	"github.com/agentplane/agentplane/internal/llm/openaichat"
)

const testKey = "sk-proj-TESTk3yV4lu3sh0uldNeverLeak9Z7Q"

// fake starts the OpenAI fake, closed with the test.
func fake(t *testing.T) *llmtest.Server {
	t.Helper()
	srv := llmtest.NewOpenAI()
	t.Cleanup(srv.Close)
	return srv
}

// provider returns a Provider calling srv as the service named name.
func provider(srv *llmtest.Server, name, key string) *openaichat.Provider {
	return openaichat.New(llm.Endpoint{Provider: name, BaseURL: srv.URL + "/v1", APIKey: key})
}

func ask(model, text string) llm.Request {
	return llm.Request{Model: model, Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}
}

func TestTextStreamsEachDelta(t *testing.T) {
	t.Parallel()
	srv := fake(t)
	srv.Push(llmtest.Reply{Text: []string{"Hel", "lo", ", world"}})
	var rec llmtest.Recorder
	resp, err := provider(srv, "openai", testKey).Complete(context.Background(), ask("gpt-4o", "hi"), rec.Emit)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Event{{Kind: llm.EventContent, Text: "Hel"}, {Kind: llm.EventContent, Text: "lo"}, {Kind: llm.EventContent, Text: ", world"}}
	if !reflect.DeepEqual(rec.Events, want) {
		t.Errorf("events = %+v, want %+v", rec.Events, want)
	}
	if resp.Content != "Hello, world" || resp.StopReason != llm.StopEnd || resp.ToolCalls != nil || resp.Thinking != nil {
		t.Errorf("response = %+v", resp)
	}
	if resp.Usage != (llm.Usage{}) {
		t.Errorf("usage = %+v, want zero when the stream reports none", resp.Usage)
	}
}

func TestReasoningFromBothFieldNames(t *testing.T) {
	t.Parallel()
	// The fake sends reasoning_content, or reasoning for an "openrouter" model.
	for _, model := range []string{"deepseek-reasoner", "openrouter/deepseek-r1"} {
		t.Run(model, func(t *testing.T) {
			t.Parallel()
			srv := fake(t)
			srv.Push(llmtest.Reply{Reasoning: []string{"The user ", "greets."}, Text: []string{"Hi!"}})
			var rec llmtest.Recorder
			resp, err := provider(srv, "deepseek", testKey).Complete(context.Background(), ask(model, "hi"), rec.Emit)
			if err != nil {
				t.Fatal(err)
			}
			want := []llm.Event{
				{Kind: llm.EventThinking, Text: "The user "},
				{Kind: llm.EventThinking, Text: "greets."},
				{Kind: llm.EventContent, Text: "Hi!"},
			}
			if !reflect.DeepEqual(rec.Events, want) {
				t.Errorf("events = %+v, want %+v", rec.Events, want)
			}
			if !reflect.DeepEqual(resp.Thinking, []llm.Thinking{{Text: "The user greets."}}) || resp.Content != "Hi!" {
				t.Errorf("response = %+v", resp)
			}
		})
	}
}

func TestToolCallsAssembledFromDeltas(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		calls []llmtest.ToolCall
		want  []llm.ToolCall
	}{
		{
			name:  "one call",
			calls: []llmtest.ToolCall{{ID: "call_1", Name: "web_search", Args: []string{`{"query":`, `"go 1.26"}`}}},
			want:  []llm.ToolCall{{ID: "call_1", Name: "web_search", Arguments: json.RawMessage(`{"query":"go 1.26"}`)}},
		},
		{
			name: "several calls, split arguments and none",
			calls: []llmtest.ToolCall{
				{ID: "call_a", Name: "get_weather", Args: []string{`{"ci`, `ty":"Par`, `is"}`}},
				{ID: "call_b", Name: "get_time", Args: []string{`{"tz":`, `"CET"}`}},
				{ID: "call_c", Name: "list_files"},
			},
			want: []llm.ToolCall{
				{ID: "call_a", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
				{ID: "call_b", Name: "get_time", Arguments: json.RawMessage(`{"tz":"CET"}`)},
				{ID: "call_c", Name: "list_files", Arguments: json.RawMessage(`{}`)},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := fake(t)
			srv.Push(llmtest.Reply{ToolCalls: tc.calls})
			var rec llmtest.Recorder
			resp, err := provider(srv, "openai", testKey).Complete(context.Background(), ask("gpt-4o", "go"), rec.Emit)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StopReason != llm.StopToolCalls || resp.Content != "" || len(rec.Events) != 0 {
				t.Errorf("stop = %q, content = %q, events = %v", resp.StopReason, resp.Content, rec.Events)
			}
			if !reflect.DeepEqual(resp.ToolCalls, tc.want) {
				t.Errorf("tool calls = %s, want %s", show(resp.ToolCalls), show(tc.want))
			}
		})
	}
}

func TestFinishReasons(t *testing.T) {
	t.Parallel()
	cases := []struct {
		reply llmtest.Reply
		want  string
		calls int
	}{
		{llmtest.Reply{Text: []string{"cut sho"}, StopReason: "length"}, llm.StopLength, 0},
		// Ollama reports "stop" for a turn of tool calls.
		{llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c", Name: "f", Args: []string{"{}"}}}, StopReason: "stop"}, llm.StopToolCalls, 1},
		// Cut at the limit, the last call's arguments are truncated: not runnable.
		{llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c", Name: "f", Args: []string{`{"a":`}}}, StopReason: "length"}, llm.StopLength, 0},
	}
	for _, tc := range cases {
		srv := fake(t)
		srv.Push(tc.reply)
		resp, err := provider(srv, "openai", testKey).Complete(context.Background(), ask("gpt-4o", "go"), func(llm.Event) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		if resp.StopReason != tc.want || len(resp.ToolCalls) != tc.calls {
			t.Errorf("finish_reason %q: stop = %q with %d calls, want %q with %d", tc.reply.StopReason, resp.StopReason, len(resp.ToolCalls), tc.want, tc.calls)
		}
	}
}

func TestUsageFromFinalChunk(t *testing.T) {
	t.Parallel()
	srv := fake(t)
	srv.Push(llmtest.Reply{Reasoning: []string{"hm"}, Text: []string{"ok"}, Usage: &llmtest.Usage{Prompt: 1200, Completion: 340, Cached: 1024, Reasoning: 300}})
	resp, _, err := llm.Call(context.Background(), provider(srv, "openai", testKey), ask("o4-mini", "hi"), func(llm.Event) bool { return true }, llm.CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := llm.Usage{PromptTokens: 1200, CompletionTokens: 340, CachedTokens: 1024, ReasoningTokens: 300}
	if resp.Usage != want {
		t.Errorf("usage = %+v, want %+v", resp.Usage, want)
	}
	// The fake (like OpenAI) sends the usage chunk only when asked for it.
	if got := srv.Requests()[0].Body["stream_options"]; !reflect.DeepEqual(got, map[string]any{"include_usage": true}) {
		t.Errorf("stream_options = %v", got)
	}
}

func TestNoUsageIsEstimated(t *testing.T) {
	t.Parallel()
	srv := fake(t)
	srv.Push(llmtest.Reply{Text: []string{"The answer is forty-two."}})
	resp, _, err := llm.Call(context.Background(), provider(srv, "vllm", testKey), ask("qwen3", "What is the answer?"), func(llm.Event) bool { return true }, llm.CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Usage.Estimated || resp.Usage.PromptTokens == 0 || resp.Usage.CompletionTokens == 0 {
		t.Errorf("usage = %+v, want an estimate", resp.Usage)
	}
}

func TestStructuredOutputUsesJSONSchemaMode(t *testing.T) {
	t.Parallel()
	srv := fake(t)
	srv.Push(llmtest.Reply{Text: []string{`{"city":`, `"Paris","temp":`, `21}`}})
	schema := `{"type":"object","properties":{"city":{"type":"string"},"temp":{"type":"number"}},"required":["city"]}`
	req := ask("gpt-4o", "Weather in Paris as JSON")
	req.OutputSchema = json.RawMessage(schema)
	var rec llmtest.Recorder
	resp, err := provider(srv, "openai", testKey).Complete(context.Background(), req, rec.Emit)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != `{"city":"Paris","temp":21}` || len(rec.Events) != 3 {
		t.Errorf("content = %q in %d events", resp.Content, len(rec.Events))
	}
	got := srv.Requests()[0]
	want := decode(t, `{"type":"json_schema","json_schema":{"name":"output","strict":false,"schema":`+schema+`}}`)
	if !reflect.DeepEqual(got.Body["response_format"], want) {
		t.Errorf("response_format = %s, want %s", show(got.Body["response_format"]), show(want))
	}
}

func TestRequestMapsTheConversation(t *testing.T) {
	t.Parallel()
	temp := 0.2
	req := llm.Request{
		Model: "gpt-4o",
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "You are a travel agent."},
			{Role: llm.RoleUser, Content: "Weather and time in Paris?"},
			{Role: llm.RoleAssistant, Thinking: []llm.Thinking{{Text: "two lookups"}}, ToolCalls: []llm.ToolCall{
				{ID: "call_a", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
				{ID: "call_b", Name: "get_time"},
			}},
			{Role: llm.RoleTool, ToolCallID: "call_a", Name: "get_weather", Content: `{"temp":21}`},
			{Role: llm.RoleTool, ToolCallID: "call_b", Name: "get_time", Content: "14:05"},
			{Role: llm.RoleAssistant, Content: "21°C and 14:05.", ToolCalls: []llm.ToolCall{{ID: "call_c", Name: "get_time", Arguments: json.RawMessage(`{}`)}}},
			{Role: llm.RoleTool, ToolCallID: "call_c", Name: "get_time", Content: "14:06"},
			{Role: llm.RoleUser, Content: "Thanks"},
		},
		Tools: []llm.ToolSpec{
			{Name: "get_weather", Description: "Current weather", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
			{Name: "get_time"},
		},
		Temperature: &temp,
		MaxTokens:   256,
	}
	const messages = `[
		{"role":"system","content":"You are a travel agent."},
		{"role":"user","content":"Weather and time in Paris?"},
		{"role":"assistant","tool_calls":[
			{"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
			{"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"call_a","content":"{\"temp\":21}"},
		{"role":"tool","tool_call_id":"call_b","content":"14:05"},
		{"role":"assistant","content":"21°C and 14:05.","tool_calls":[
			{"id":"call_c","type":"function","function":{"name":"get_time","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"call_c","content":"14:06"},
		{"role":"user","content":"Thanks"}]`
	const tools = `[
		{"type":"function","function":{"name":"get_weather","description":"Current weather",
			"parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},
		{"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{}}}}]`
	// OpenAI's reasoning models reject max_tokens; other servers may only know it.
	for provName, maxField := range map[string]string{"openai": "max_completion_tokens", "deepseek": "max_tokens"} {
		t.Run(provName, func(t *testing.T) {
			t.Parallel()
			srv := fake(t)
			srv.Push(llmtest.Reply{Text: []string{"You're welcome."}})
			if _, err := provider(srv, provName, testKey).Complete(context.Background(), req, func(llm.Event) error { return nil }); err != nil {
				t.Fatal(err)
			}
			want := decode(t, `{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"temperature":0.2,
				"`+maxField+`":256,"messages":`+messages+`,"tools":`+tools+`}`)
			got := srv.Requests()[0]
			if !reflect.DeepEqual(got.Body, want) {
				t.Errorf("body =\n%s\nwant\n%s", got.Raw, show(want))
			}
			if got.Method != http.MethodPost || got.Path != "/v1/chat/completions" {
				t.Errorf("request = %s %s", got.Method, got.Path)
			}
		})
	}
}

func TestAPIKeySentAsBearer(t *testing.T) {
	srv := fake(t)
	// Ambient OPENAI_* settings are not the endpoint's: none may reach the provider.
	t.Setenv("OPENAI_API_KEY", "sk-from-the-environment")
	t.Setenv("OPENAI_ORG_ID", "org-environment")
	srv.Push(llmtest.Reply{Text: []string{"ok"}})
	if _, err := provider(srv, "openai", testKey).Complete(context.Background(), ask("gpt-4o", "hi"), func(llm.Event) error { return nil }); err != nil {
		t.Fatal(err)
	}
	h := srv.Requests()[0].Header
	if got := h.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
	if got := h.Get("OpenAI-Organization"); got != "" {
		t.Errorf("OpenAI-Organization = %q, want none", got)
	}

	// No key: none is sent (a local server needs none), and the fake rejects the call.
	_, err := provider(srv, "ollama", "").Complete(context.Background(), ask("gpt-4o", "hi"), func(llm.Event) error { return nil })
	var pe *llm.Error
	if !errors.As(err, &pe) || pe.Status != http.StatusUnauthorized {
		t.Fatalf("err = %v, want a 401", err)
	}
	if got := srv.Requests()[1].Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization without a key = %q", got)
	}
}

func TestListModels(t *testing.T) {
	t.Parallel()
	srv := fake(t)
	srv.Models = []string{"gpt-4o", "o4-mini", "models/gemini-2.5-flash"}
	ids, err := provider(srv, "openai", testKey).ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"gpt-4o", "o4-mini", "gemini-2.5-flash"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("ids = %v, want %v", ids, want)
	}
	got := srv.Requests()[0]
	if got.Method != http.MethodGet || got.Path != "/v1/models" || got.Header.Get("Authorization") != "Bearer "+testKey {
		t.Errorf("request = %s %s with Authorization %q", got.Method, got.Path, got.Header.Get("Authorization"))
	}
}

func TestEmitErrorStopsTheCall(t *testing.T) {
	t.Parallel()
	srv := fake(t)
	srv.Push(llmtest.Reply{Text: []string{"one", "two", "three"}})
	stop := errors.New("client went away")
	n := 0
	_, err := provider(srv, "openai", testKey).Complete(context.Background(), ask("gpt-4o", "hi"), func(llm.Event) error {
		n++
		return stop
	})
	if err != stop || n != 1 {
		t.Errorf("err = %v after %d events, want emit's error after 1", err, n)
	}
}

func BenchmarkComplete(b *testing.B) {
	srv := llmtest.NewOpenAI()
	defer srv.Close()
	text := make([]string, 50)
	for i := range text {
		text[i] = "word "
	}
	srv.Fallback = func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: text, Usage: &llmtest.Usage{Prompt: 10, Completion: 50}}
	}
	p := provider(srv, "openai", testKey)
	req := ask("gpt-4o", "hi")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Complete(context.Background(), req, func(llm.Event) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad test JSON: %v", err)
	}
	return v
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
