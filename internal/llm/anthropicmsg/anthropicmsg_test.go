package anthropicmsg_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/llm/anthropicmsg"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
)

// testKey looks like a real key so that the masked forms a provider echoes can be tested.
const testKey = "sk-ant-api03-Zx9secretsecret-Q1234"

// setup starts a fake Anthropic API and a Provider calling it.
func setup(t *testing.T) (*llmtest.Server, *anthropicmsg.Provider) {
	t.Helper()
	srv := llmtest.NewAnthropic()
	t.Cleanup(srv.Close)
	return srv, anthropicmsg.New(endpoint(srv.URL, testKey))
}

func endpoint(url, key string) llm.Endpoint {
	return llm.Endpoint{Provider: "anthropic", BaseURL: url, APIKey: key}
}

// ask is the smallest request the fake accepts.
func ask() llm.Request {
	return llm.Request{Model: "claude-test", Messages: []llm.Message{{Role: llm.RoleUser, Content: "Hi"}}}
}

func complete(t *testing.T, p *anthropicmsg.Provider, req llm.Request) (*llm.Response, *llmtest.Recorder) {
	t.Helper()
	rec := &llmtest.Recorder{}
	resp, err := p.Complete(context.Background(), req, rec.Emit)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	return resp, rec
}

// providerError asserts that err is an *llm.Error and returns it.
func providerError(t *testing.T, err error) *llm.Error {
	t.Helper()
	var pe *llm.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not an *llm.Error", err, err)
	}
	return pe
}

func equal[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

func TestText(t *testing.T) {
	t.Parallel()
	srv, p := setup(t)
	srv.Push(llmtest.Reply{Text: []string{"Hel", "lo", " world"}, Usage: &llmtest.Usage{Prompt: 12, Completion: 3}})
	resp, rec := complete(t, p, ask())
	equal(t, "events", rec.Events, []llm.Event{
		{Kind: llm.EventContent, Text: "Hel"}, {Kind: llm.EventContent, Text: "lo"}, {Kind: llm.EventContent, Text: " world"},
	})
	equal(t, "Content", resp.Content, "Hello world")
	equal(t, "StopReason", resp.StopReason, llm.StopEnd)
	equal(t, "Usage", resp.Usage, llm.Usage{PromptTokens: 12, CompletionTokens: 3})
	equal(t, "ToolCalls", resp.ToolCalls, []llm.ToolCall(nil))
}

func TestReasoning(t *testing.T) {
	t.Parallel()
	srv, p := setup(t)
	srv.Push(llmtest.Reply{Reasoning: []string{"The user ", "greets me."}, Signature: "c2lnbmVk", Text: []string{"Hello!"}})
	resp, rec := complete(t, p, ask())
	equal(t, "events", rec.Events, []llm.Event{
		{Kind: llm.EventThinking, Text: "The user "}, {Kind: llm.EventThinking, Text: "greets me."}, {Kind: llm.EventContent, Text: "Hello!"},
	})
	equal(t, "Thinking", resp.Thinking, []llm.Thinking{{Text: "The user greets me.", Signature: "c2lnbmVk"}})
	equal(t, "Content", resp.Content, "Hello!")
}

func TestToolCalls(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		calls []llmtest.ToolCall
		want  []llm.ToolCall
	}{
		{
			name:  "one call, arguments in three chunks",
			calls: []llmtest.ToolCall{{ID: "toolu_1", Name: "get_weather", Args: []string{`{"ci`, `ty": "Pa`, `ris"}`}}},
			want:  []llm.ToolCall{{ID: "toolu_1", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Paris"}`)}},
		},
		{
			name: "several calls, one without arguments",
			calls: []llmtest.ToolCall{
				{ID: "toolu_1", Name: "search", Args: []string{"", `{"q":`, `"go"}`}},
				{ID: "toolu_2", Name: "now"},
				{ID: "toolu_3", Name: "fetch", Args: []string{`{"url":"https://`, `example.com"}`}},
			},
			want: []llm.ToolCall{
				{ID: "toolu_1", Name: "search", Arguments: json.RawMessage(`{"q":"go"}`)},
				{ID: "toolu_2", Name: "now", Arguments: json.RawMessage(`{}`)},
				{ID: "toolu_3", Name: "fetch", Arguments: json.RawMessage(`{"url":"https://example.com"}`)},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, p := setup(t)
			srv.Push(llmtest.Reply{ToolCalls: tt.calls})
			req := ask()
			req.Tools = []llm.ToolSpec{{Name: "search"}, {Name: "now"}, {Name: "fetch"}, {Name: "get_weather"}}
			resp, rec := complete(t, p, req)
			equal(t, "ToolCalls", resp.ToolCalls, tt.want)
			equal(t, "StopReason", resp.StopReason, llm.StopToolCalls)
			equal(t, "Content", resp.Content, "")
			equal(t, "events", len(rec.Events), 0)
		})
	}
}

func TestUsageInFinalChunk(t *testing.T) {
	t.Parallel()
	srv, p := setup(t)
	srv.Push(llmtest.Reply{Text: []string{"ok"}, Usage: &llmtest.Usage{Prompt: 1000, Cached: 800, Completion: 50, Reasoning: 20}})
	resp, _ := complete(t, p, ask())
	equal(t, "Usage", resp.Usage, llm.Usage{PromptTokens: 1000, CompletionTokens: 50, CachedTokens: 800, ReasoningTokens: 20})
}

func TestNoUsageIsEstimated(t *testing.T) {
	t.Parallel()
	srv, p := setup(t)
	srv.Push(llmtest.Reply{Text: []string{"An answer of a few words."}})
	resp, attempts, err := llm.Call(context.Background(), p, ask(), (&llmtest.Recorder{}).Sent, llm.CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "attempts", len(attempts), 1)
	if !resp.Usage.Estimated || resp.Usage.PromptTokens == 0 || resp.Usage.CompletionTokens == 0 {
		t.Errorf("Usage = %+v, want an estimate", resp.Usage)
	}
}

func TestEmitErrorStops(t *testing.T) {
	t.Parallel()
	srv, p := setup(t)
	srv.Push(llmtest.Reply{Text: []string{"a", "b", "c"}})
	stop := errors.New("client went away")
	calls := 0
	_, err := p.Complete(context.Background(), ask(), func(llm.Event) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) {
		t.Fatalf("err = %v, want emit's error", err)
	}
	equal(t, "emit calls", calls, 1)
}

func TestCancelMidStream(t *testing.T) {
	t.Parallel()
	srv, p := setup(t)
	srv.Push(llmtest.Reply{Text: []string{"one ", "two ", "three ", "four"}, Delay: 200 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelled time.Time
	_, err := p.Complete(ctx, ask(), func(ev llm.Event) error {
		if cancelled.IsZero() {
			cancelled = time.Now()
			cancel()
		}
		return nil
	})
	returned := time.Now()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if cancelled.IsZero() {
		t.Fatal("no event was emitted before the cancel")
	}
	if d := returned.Sub(cancelled); d > 50*time.Millisecond {
		t.Errorf("Complete returned %v after the cancel, want within 50ms", d)
	}
	select {
	case gone := <-srv.ClientGone():
		if d := gone.Sub(cancelled); d > 100*time.Millisecond {
			t.Errorf("the server saw the client leave %v after the cancel, want within 100ms", d)
		}
	case <-time.After(time.Second):
		t.Fatal("the upstream connection was not closed")
	}
}

func TestListModels(t *testing.T) {
	t.Parallel()
	srv, p := setup(t)
	srv.Models = []string{"claude-opus-4-1", "claude-sonnet-4-5", "claude-haiku-4-5"}
	ids, err := p.ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "ids", ids, srv.Models)
	reqs := srv.Requests()
	equal(t, "requests", len(reqs), 1)
	equal(t, "path", reqs[0].Method+" "+reqs[0].Path, "GET /v1/models")
	equal(t, "x-api-key", reqs[0].Header.Get("x-api-key"), testKey)

	_, err = anthropicmsg.New(endpoint(srv.URL, "bad-key")).ListModels(context.Background())
	if pe := providerError(t, err); !pe.Rejected() || pe.Message != "invalid x-api-key" {
		t.Errorf("ListModels with a bad key: %v, want a rejection", pe)
	}
}

func TestAPIKeyHeader(t *testing.T) {
	// Not parallel: it sets the environment variables the SDK would read by default, to
	// prove the Provider ignores them.
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "platform-token")
	t.Setenv("ANTHROPIC_API_KEY", "platform-key")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Leak: yes")
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request sent to ANTHROPIC_BASE_URL: %s", r.URL)
	}))
	defer elsewhere.Close()
	t.Setenv("ANTHROPIC_BASE_URL", elsewhere.URL)

	srv, p := setup(t)
	srv.Push(llmtest.Reply{Text: []string{"ok"}})
	complete(t, p, ask())
	h := srv.Requests()[0].Header
	equal(t, "x-api-key", h.Get("x-api-key"), testKey)
	equal(t, "Authorization", h.Get("Authorization"), "")
	equal(t, "X-Leak", h.Get("X-Leak"), "")
	if h.Get("anthropic-version") == "" {
		t.Error("no anthropic-version header")
	}

	// Without a key the fake answers 401 as the real API does: the key is what it checks.
	_, err := anthropicmsg.New(endpoint(srv.URL, "")).Complete(context.Background(), ask(), (&llmtest.Recorder{}).Emit)
	if pe := providerError(t, err); pe.Status != http.StatusUnauthorized {
		t.Errorf("without a key: %v, want 401", pe)
	}
}

// rawServer answers the n-th request with bodies[n] as an event stream, for wire cases
// the scripted fake does not render (error events, broken streams).
func rawServer(t *testing.T, bodies ...string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		if i >= len(bodies) {
			http.Error(w, `{"type":"error","error":{"type":"api_error","message":"no body left"}}`, 500)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(bodies[i]))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// sse frames events as the API does: name, then its JSON.
func sse(events ...string) string {
	var b strings.Builder
	for _, ev := range events {
		var typed struct{ Type string }
		_ = json.Unmarshal([]byte(ev), &typed)
		b.WriteString("event: " + typed.Type + "\ndata: " + ev + "\n\n")
	}
	return b.String()
}

const (
	evStart     = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":5,"cache_read_input_tokens":20,"output_tokens":1}}}`
	evTextStart = `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	evTextDelta = `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`
	evTextStop  = `{"type":"content_block_stop","index":0}`
	evEnd       = `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":7}}`
	evStop      = `{"type":"message_stop"}`
)

func TestCacheCreationUsage(t *testing.T) {
	t.Parallel()
	srv, _ := rawServer(t, sse(evStart, evTextStart, evTextDelta, evTextStop, evEnd, evStop))
	resp, _ := complete(t, anthropicmsg.New(endpoint(srv.URL, testKey)), ask())
	equal(t, "Usage", resp.Usage, llm.Usage{PromptTokens: 35, CompletionTokens: 7, CachedTokens: 25})
	equal(t, "Content", resp.Content, "Hi")
}

func BenchmarkComplete(b *testing.B) {
	srv := llmtest.NewAnthropic()
	defer srv.Close()
	words := strings.Fields(strings.Repeat("a streamed answer of some length ", 40))
	srv.Fallback = func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: words, Usage: &llmtest.Usage{Prompt: 10, Completion: len(words)}}
	}
	p := anthropicmsg.New(endpoint(srv.URL, testKey))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := p.Complete(context.Background(), ask(), func(llm.Event) error { return nil }); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
