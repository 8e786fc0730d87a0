package gemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/llm/gemini"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
)

const (
	testKey   = "AIzaSyD-fake-test-key-7Qx1234"
	testModel = "gemini-2.5-flash"
)

// endpoint is the Endpoint of a fake (or any) server at url.
func endpoint(url string) llm.Endpoint {
	return llm.Endpoint{Provider: "gemini", BaseURL: url, APIKey: testKey}
}

// start returns a Gemini fake and a Provider calling it.
func start(t *testing.T) (*llmtest.Server, *gemini.Provider) {
	t.Helper()
	srv := llmtest.NewGemini()
	t.Cleanup(srv.Close)
	return srv, gemini.New(endpoint(srv.URL))
}

func ask(text string) llm.Request {
	return llm.Request{Model: testModel, Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}
}

// rawSSE serves each frame verbatim as a Gemini stream, for wire shapes a Reply cannot
// express (several calls in one chunk, prompt feedback, a malformed chunk).
func rawSSE(t *testing.T, frames ...string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, f := range frames {
			_, _ = w.Write([]byte(f))
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestText(t *testing.T) {
	t.Parallel()
	srv, p := start(t)
	srv.Push(llmtest.Reply{Text: []string{"Hel", "lo, ", "world"}})
	var rec llmtest.Recorder
	resp, err := p.Complete(context.Background(), ask("hi"), rec.Emit)
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.Texts(llm.EventContent); !reflect.DeepEqual(got, []string{"Hel", "lo, ", "world"}) {
		t.Errorf("content events = %q", got)
	}
	if resp.Content != "Hello, world" || resp.StopReason != llm.StopEnd || resp.ToolCalls != nil || resp.Thinking != nil {
		t.Errorf("response = %+v", resp)
	}
	req := srv.Requests()[0]
	if req.Method != http.MethodPost || req.Path != "/v1beta/models/"+testModel+":streamGenerateContent" || req.Query != "alt=sse" {
		t.Errorf("request = %s %s?%s", req.Method, req.Path, req.Query)
	}
}

func TestReasoning(t *testing.T) {
	t.Parallel()
	srv, p := start(t)
	srv.Push(llmtest.Reply{Reasoning: []string{"The user greets; ", "answer briefly."}, Signature: "c2lnLXRoaW5r", Text: []string{"Hi!"}})
	var rec llmtest.Recorder
	resp, err := p.Complete(context.Background(), ask("hi"), rec.Emit)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Event{
		{Kind: llm.EventThinking, Text: "The user greets; "},
		{Kind: llm.EventThinking, Text: "answer briefly."},
		{Kind: llm.EventContent, Text: "Hi!"},
	}
	if !reflect.DeepEqual(rec.Events, want) {
		t.Errorf("events = %+v", rec.Events)
	}
	wantThinking := []llm.Thinking{{Text: "The user greets; answer briefly.", Signature: "c2lnLXRoaW5r"}}
	if resp.Content != "Hi!" || !reflect.DeepEqual(resp.Thinking, wantThinking) {
		t.Errorf("response = %+v", resp)
	}
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

func TestToolCalls(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		calls []llmtest.ToolCall
		want  []llm.ToolCall
	}{{
		name:  "one call, args split, with signature",
		calls: []llmtest.ToolCall{{ID: "fc-1", Name: "search", Args: []string{`{"query":`, `"go generics",`, `"limit":5}`}, Signature: "c2lnLTE="}},
		want:  []llm.ToolCall{{ID: "fc-1", Name: "search", Arguments: json.RawMessage(`{"query":"go generics","limit":5}`), Signature: "c2lnLTE="}},
	}, {
		name: "several calls across chunks, ids generated where missing",
		calls: []llmtest.ToolCall{
			{Name: "weather", Args: []string{`{"city":`, `"Paris"}`}},
			{ID: "call_1", Name: "weather", Args: []string{`{"city":"Rome"}`}},
			{Name: "clock"},
		},
		want: []llm.ToolCall{
			{ID: "call_2", Name: "weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
			{ID: "call_1", Name: "weather", Arguments: json.RawMessage(`{"city":"Rome"}`)},
			{ID: "call_3", Name: "clock", Arguments: json.RawMessage(`{}`)},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, p := start(t)
			srv.Push(llmtest.Reply{ToolCalls: tt.calls})
			var rec llmtest.Recorder
			resp, err := p.Complete(context.Background(), ask("go"), rec.Emit)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StopReason != llm.StopToolCalls || len(resp.ToolCalls) != len(tt.want) || len(rec.Events) != 0 {
				t.Fatalf("response = %+v, events = %+v", resp, rec.Events)
			}
			for i, got := range resp.ToolCalls {
				w := tt.want[i]
				if got.ID != w.ID || got.Name != w.Name || got.Signature != w.Signature || !sameJSON(t, got.Arguments, w.Arguments) {
					t.Errorf("call %d = %+v %s, want %+v %s", i, got, got.Arguments, w, w.Arguments)
				}
			}
		})
	}
}

// TestSignatureRoundTrip checks that a call's thought signature goes back on the same
// functionCall part of the next request, as Gemini requires.
func TestSignatureRoundTrip(t *testing.T) {
	t.Parallel()
	srv, p := start(t)
	srv.Push(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "lookup", Args: []string{`{"id":7}`}, Signature: "AAECAwQ="}}},
		llmtest.Reply{Text: []string{"done"}})
	req := ask("look up 7")
	resp, err := p.Complete(context.Background(), req, func(llm.Event) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	tc := resp.ToolCalls[0]
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, ToolCalls: resp.ToolCalls},
		llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: `{"found":true}`})
	if _, err := p.Complete(context.Background(), req, func(llm.Event) error { return nil }); err != nil {
		t.Fatal(err)
	}
	body := srv.Requests()[1].Body
	turn := body["contents"].([]any)[1].(map[string]any)
	want := map[string]any{"role": "model", "parts": []any{map[string]any{
		"functionCall":     map[string]any{"id": "call_1", "name": "lookup", "args": map[string]any{"id": 7.0}},
		"thoughtSignature": "AAECAwQ=",
	}}}
	if !reflect.DeepEqual(turn, want) {
		t.Errorf("model turn = %v", turn)
	}
}

func TestSeveralCallsInOneChunk(t *testing.T) {
	t.Parallel()
	srv := rawSSE(t,
		`data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"a","args":{"x":1}},"thoughtSignature":"c2ln"},{"functionCall":{"name":"b","args":{}}}]},"index":0}],"modelVersion":"m"}`+"\n\n",
		`data: {"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":50,"toolUsePromptTokenCount":7,"candidatesTokenCount":9,"totalTokenCount":66},"modelVersion":"m"}`+"\n\n")
	resp, err := gemini.New(endpoint(srv.URL)).Complete(context.Background(), ask("go"), func(llm.Event) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 2 || resp.ToolCalls[0].ID != "call_1" || resp.ToolCalls[0].Signature != "c2ln" ||
		resp.ToolCalls[1].ID != "call_2" || string(resp.ToolCalls[1].Arguments) != "{}" || resp.StopReason != llm.StopToolCalls {
		t.Errorf("response = %+v", resp)
	}
	if want := (llm.Usage{PromptTokens: 57, CompletionTokens: 9}); resp.Usage != want {
		t.Errorf("usage = %+v, want %+v (tool-use prompt tokens count as prompt)", resp.Usage, want)
	}
}

func TestUsage(t *testing.T) {
	t.Parallel()
	srv, p := start(t)
	srv.Push(llmtest.Reply{Reasoning: []string{"hmm"}, Text: []string{"ok"}, Usage: &llmtest.Usage{Prompt: 1200, Completion: 80, Cached: 1000, Reasoning: 60}})
	resp, err := p.Complete(context.Background(), ask("hi"), func(llm.Event) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := llm.Usage{PromptTokens: 1200, CompletionTokens: 80, CachedTokens: 1000, ReasoningTokens: 60}
	if resp.Usage != want {
		t.Errorf("usage = %+v, want %+v", resp.Usage, want)
	}
}

func TestNoUsageIsEstimated(t *testing.T) {
	t.Parallel()
	srv, p := start(t)
	srv.Push(llmtest.Reply{Text: []string{"a short answer"}})
	resp, attempts, err := llm.Call(context.Background(), p, ask("a question"), func(llm.Event) bool { return true }, llm.CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(attempts) != 1 || !resp.Usage.Estimated || resp.Usage.PromptTokens == 0 || resp.Usage.CompletionTokens == 0 {
		t.Errorf("usage = %+v, attempts = %d", resp.Usage, len(attempts))
	}
}

func TestFinishReasons(t *testing.T) {
	t.Parallel()
	tests := []struct {
		reason   string
		wantStop string
		wantErr  string
	}{
		{reason: "MAX_TOKENS", wantStop: llm.StopLength},
		{reason: "SAFETY", wantErr: "gemini stopped the answer: SAFETY"},
		{reason: "RECITATION", wantErr: "gemini stopped the answer: RECITATION"},
		{reason: "MALFORMED_FUNCTION_CALL", wantErr: "gemini stopped the answer: MALFORMED_FUNCTION_CALL"},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			t.Parallel()
			srv, p := start(t)
			srv.Push(llmtest.Reply{Text: []string{"It was a"}, StopReason: tt.reason}, llmtest.Reply{Text: []string{"retried"}})
			resp, attempts, err := llm.Call(context.Background(), p, ask("go"), func(llm.Event) bool { return true }, llm.CallOptions{MaxRetries: 2, Backoff: time.Millisecond})
			if tt.wantErr == "" {
				if err != nil || resp.StopReason != tt.wantStop || resp.Content != "It was a" {
					t.Fatalf("resp = %+v, err = %v", resp, err)
				}
				return
			}
			var pe *llm.Error
			if err == nil || err.Error() != tt.wantErr || errors.As(err, &pe) || len(attempts) != 1 {
				t.Errorf("err = %v (%T), attempts = %d; want %q, not retried", err, err, len(attempts), tt.wantErr)
			}
		})
	}
}

func TestPromptBlocked(t *testing.T) {
	t.Parallel()
	srv := rawSSE(t, `data: {"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},"usageMetadata":{"promptTokenCount":12,"totalTokenCount":12},"modelVersion":"m"}`+"\n\n")
	_, err := gemini.New(endpoint(srv.URL)).Complete(context.Background(), ask("bad"), func(llm.Event) error { return nil })
	if err == nil || err.Error() != "gemini blocked the prompt: PROHIBITED_CONTENT" {
		t.Errorf("err = %v", err)
	}
}

func TestMalformedStream(t *testing.T) {
	t.Parallel()
	srv := rawSSE(t, `data: {"candidates":[{"content":{"parts":[{"text":"ok"}]}}]}`+"\n\n", "data: {not json\n\n")
	var rec llmtest.Recorder
	_, err := gemini.New(endpoint(srv.URL)).Complete(context.Background(), ask("x"), rec.Emit)
	var pe *llm.Error
	if !errors.As(err, &pe) || pe.Status != 0 || !pe.Retryable() {
		t.Errorf("err = %v (%T), want a transport *llm.Error", err, err)
	}
}

func TestEmitErrorStops(t *testing.T) {
	t.Parallel()
	srv, p := start(t)
	srv.Push(llmtest.Reply{Text: []string{"one", "two", "three"}})
	stop := errors.New("client went away")
	n := 0
	_, err := p.Complete(context.Background(), ask("x"), func(llm.Event) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("err = %v after %d events", err, n)
	}
}

func TestCancelMidStream(t *testing.T) {
	t.Parallel()
	srv, p := start(t)
	srv.Push(llmtest.Reply{Text: []string{"one ", "two ", "three ", "four"}, Delay: 200 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelled time.Time
	_, err := p.Complete(ctx, ask("count"), func(ev llm.Event) error {
		if cancelled.IsZero() && ev.Kind == llm.EventContent {
			cancelled = time.Now()
			cancel()
		}
		return nil
	})
	returned := time.Since(cancelled)
	if cancelled.IsZero() {
		t.Fatalf("no content event before the end: err = %v", err)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if returned > 50*time.Millisecond {
		t.Errorf("Complete returned %v after cancel", returned)
	}
	select {
	case gone := <-srv.ClientGone():
		if d := gone.Sub(cancelled); d > 100*time.Millisecond {
			t.Errorf("the fake saw the client leave %v after cancel", d)
		}
	case <-time.After(time.Second):
		t.Error("the connection to the fake was not closed")
	}
}
