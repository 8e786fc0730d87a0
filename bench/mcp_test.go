package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
	"github.com/agentplane/agentplane/internal/mcpclient"
	"github.com/agentplane/agentplane/internal/mcpclient/mcptest"
)

// BenchmarkMCPToolCall measures, with one caller, the platform's own time per tool call:
// sync execute on `serve` (SQLite) of an `agent` whose model (a zero-latency OpenAI fake)
// calls one tool of a local MCP server (streamable HTTP, built with the SDK) and then
// answers. The time from the end of the model's first answer to the start of its second
// request is the tool step (frame, span, session opened with the server, the call, the
// result back into the conversation); minus the server's own time answering it, that is
// what the platform adds (goal: p50 <= 2 ms). The baseline is the same session and call
// made with the SDK alone, minus the same server time.
func BenchmarkMCPToolCall(b *testing.B) {
	ctx := context.Background()
	srv := mcptest.New(mcptest.StreamableHTTP)
	b.Cleanup(srv.Close)

	// The model asks for lookup_order, then answers with the tool's result.
	fake := llmtest.NewOpenAI()
	fake.Discard = true
	fake.Fallback = func(req llmtest.Request) llmtest.Reply {
		if msgs, _ := req.Body["messages"].([]any); len(msgs) > 2 {
			return llmtest.Reply{Text: []string{"Shipped."}}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "lookup_order", Args: []string{`{"order_id":"A-17"}`}}}}
	}
	b.Cleanup(fake.Close)
	// In front of the fake: when each model request starts and when its answer ends.
	var mu sync.Mutex
	var answered, asked time.Time
	var busyAtAnswer time.Duration
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body struct{ Messages []json.RawMessage }
		_ = json.Unmarshal(raw, &body)
		second := len(body.Messages) > 2
		if second {
			mu.Lock()
			asked = time.Now()
			mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(raw))
		fake.Config.Handler.ServeHTTP(w, r)
		if !second {
			mu.Lock()
			answered, busyAtAnswer = time.Now(), srv.Busy()
			mu.Unlock()
		}
	}))
	b.Cleanup(model.Close)

	c := client.New(serveOpenAI(b, model.URL+"/v1", 4))
	tool, err := c.MCPToolCreate(ctx, client.McpToolCreateRequest{Name: "Orders", URL: srv.Endpoint})
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := c.MCPToolRefresh(ctx, tool.ID); err != nil {
		b.Fatal(err)
	}
	a, err := c.AgentCreate(ctx, client.AgentCreateRequest{Name: "Orders", Type: "agent",
		Config: client.AgentConfig{Model: "gpt-4o-mini", Tools: client.MCPTools(tool.ID)}})
	if err != nil {
		b.Fatal(err)
	}
	viaServe := func() time.Duration {
		x, err := c.Execute(ctx, a.ID, client.ExecuteRequest{Input: map[string]any{"message": "Where is order A-17?"}})
		if err != nil || x.Status != "completed" {
			b.Fatalf("execute: %+v %v", x, err)
		}
		mu.Lock()
		defer mu.Unlock()
		return asked.Sub(answered) - (srv.Busy() - busyAtAnswer)
	}
	direct := mcpclient.New(mcpclient.Options{})
	b.Cleanup(direct.Close)
	viaSDK := func() time.Duration {
		busy, start := srv.Busy(), time.Now()
		sess, err := direct.Connect(ctx, mcpclient.Server{Transport: mcpclient.StreamableHTTP, URL: srv.Endpoint})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := sess.CallTool(ctx, "lookup_order", json.RawMessage(`{"order_id":"A-17"}`)); err != nil {
			b.Fatal(err)
		}
		d := time.Since(start) - (srv.Busy() - busy)
		sess.Close()
		return d
	}
	for range 50 { // warm up
		viaServe()
		viaSDK()
	}
	var served, sdk []time.Duration
	b.ResetTimer()
	for range max(b.N, 400) {
		served = append(served, viaServe())
		sdk = append(sdk, viaSDK())
	}
	b.ReportMetric(ms(quantile(served, 0.5)), "platform_p50_ms")
	b.ReportMetric(ms(quantile(served, 0.9)), "platform_p90_ms")
	b.ReportMetric(ms(quantile(sdk, 0.5)), "sdk_p50_ms")
	b.ReportMetric(float64(quantile(served, 0.5))/float64(quantile(sdk, 0.5)), "p50_ratio")
}
