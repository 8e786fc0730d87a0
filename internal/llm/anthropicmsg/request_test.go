package anthropicmsg_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
)

// equalJSON compares a decoded body (or part of it) with the JSON text want.
func equalJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want of %s: %v", what, err)
	}
	g, _ := json.Marshal(got)
	var gn any
	_ = json.Unmarshal(g, &gn)
	equal(t, what, gn, w)
}

func TestRequestMapping(t *testing.T) {
	t.Parallel()
	srv, p := setup(t)
	srv.Push(llmtest.Reply{Text: []string{"It is sunny in Paris and 18°C in Rome."}})
	temp := 0.3
	req := llm.Request{
		Model:       "claude-sonnet-4-5",
		Temperature: &temp,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "You are a weather assistant."},
			{Role: llm.RoleSystem, Content: "Answer briefly."},
			{Role: llm.RoleUser, Content: "Weather in Paris and Rome?"},
			{
				Role:    llm.RoleAssistant,
				Content: "Let me look.",
				Thinking: []llm.Thinking{
					{Text: "Two cities, two calls.", Signature: "sig-1"},
					{Redacted: "opaque-data"},
					{Text: "unsigned reasoning of another provider"},
				},
				ToolCalls: []llm.ToolCall{
					{ID: "toolu_1", Name: "weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
					{ID: "toolu_2", Name: "weather", Arguments: json.RawMessage(` `)},
				},
			},
			{Role: llm.RoleTool, ToolCallID: "toolu_1", Name: "weather", Content: "sunny"},
			{Role: llm.RoleTool, ToolCallID: "toolu_2", Name: "weather", Content: ""},
			{Role: llm.RoleUser, Content: "And tomorrow?"},
		},
		Tools: []llm.ToolSpec{
			{Name: "weather", Description: "Current weather of a city.", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","minLength":1}},"required":["city"],"additionalProperties":false}`)},
			{Name: "now"},
		},
	}
	complete(t, p, req)
	got := srv.Requests()[0]
	equal(t, "path", got.Method+" "+got.Path, "POST /v1/messages")
	equalJSON(t, "body", got.Body, `{
		"model": "claude-sonnet-4-5",
		"max_tokens": 8192,
		"temperature": 0.3,
		"stream": true,
		"system": [{"type": "text", "text": "You are a weather assistant.\n\nAnswer briefly."}],
		"messages": [
			{"role": "user", "content": [{"type": "text", "text": "Weather in Paris and Rome?"}]},
			{"role": "assistant", "content": [
				{"type": "thinking", "thinking": "Two cities, two calls.", "signature": "sig-1"},
				{"type": "redacted_thinking", "data": "opaque-data"},
				{"type": "text", "text": "Let me look."},
				{"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}},
				{"type": "tool_use", "id": "toolu_2", "name": "weather", "input": {}}
			]},
			{"role": "user", "content": [
				{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "sunny"}]},
				{"type": "tool_result", "tool_use_id": "toolu_2"}
			]},
			{"role": "user", "content": [{"type": "text", "text": "And tomorrow?"}]}
		],
		"tools": [
			{"name": "weather", "description": "Current weather of a city.", "input_schema": {"type":"object","properties":{"city":{"type":"string","minLength":1}},"required":["city"],"additionalProperties":false}},
			{"name": "now", "input_schema": {"type": "object", "properties": {}}}
		]
	}`)
}

func TestMaxTokens(t *testing.T) {
	t.Parallel()
	srv, p := setup(t)
	srv.Push(llmtest.Reply{Text: []string{"Once upon"}, StopReason: "max_tokens"})
	req := ask()
	req.MaxTokens = 2
	resp, _ := complete(t, p, req)
	equal(t, "max_tokens", srv.Requests()[0].Body["max_tokens"], any(2.0))
	equal(t, "StopReason", resp.StopReason, llm.StopLength)
}

const answerSchema = `{"type":"object","properties":{"answer":{"type":"integer"}},"required":["answer"]}`

func TestStructuredOutput(t *testing.T) {
	t.Parallel()
	output := llmtest.ToolCall{ID: "toolu_out", Name: "output", Args: []string{`{"answer"`, `: 42}`}}
	search := llmtest.ToolCall{ID: "toolu_s", Name: "search", Args: []string{`{"q":"x"}`}}
	tests := []struct {
		name       string
		tools      []llm.ToolSpec
		calls      []llmtest.ToolCall
		toolChoice string
		wantTools  []string
		content    string
		stop       string
		toolCalls  []llm.ToolCall
	}{
		{
			name: "no tools: the output tool is forced", calls: []llmtest.ToolCall{output},
			toolChoice: `{"type":"tool","name":"output"}`, wantTools: []string{"output"},
			content: `{"answer": 42}`, stop: llm.StopEnd,
		},
		{
			name: "with tools: any tool, the model answers", tools: []llm.ToolSpec{{Name: "search"}}, calls: []llmtest.ToolCall{output},
			toolChoice: `{"type":"any"}`, wantTools: []string{"search", "output"},
			content: `{"answer": 42}`, stop: llm.StopEnd,
		},
		{
			name: "with tools: the model calls one", tools: []llm.ToolSpec{{Name: "search"}}, calls: []llmtest.ToolCall{search},
			toolChoice: `{"type":"any"}`, wantTools: []string{"search", "output"},
			stop: llm.StopToolCalls, toolCalls: []llm.ToolCall{{ID: "toolu_s", Name: "search", Arguments: json.RawMessage(`{"q":"x"}`)}},
		},
		{
			name: "with tools: another tool beside the output wins", tools: []llm.ToolSpec{{Name: "search"}}, calls: []llmtest.ToolCall{output, search},
			toolChoice: `{"type":"any"}`, wantTools: []string{"search", "output"},
			stop: llm.StopToolCalls, toolCalls: []llm.ToolCall{{ID: "toolu_s", Name: "search", Arguments: json.RawMessage(`{"q":"x"}`)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, p := setup(t)
			srv.Push(llmtest.Reply{ToolCalls: tt.calls})
			req := ask()
			req.Tools = tt.tools
			req.OutputSchema = json.RawMessage(answerSchema)
			resp, rec := complete(t, p, req)

			body := srv.Requests()[0].Body
			equalJSON(t, "tool_choice", body["tool_choice"], tt.toolChoice)
			var names []string
			for _, tool := range body["tools"].([]any) {
				tool := tool.(map[string]any)
				names = append(names, tool["name"].(string))
				if tool["name"] == "output" {
					equalJSON(t, "output input_schema", tool["input_schema"], answerSchema)
				}
			}
			equal(t, "tools", names, tt.wantTools)

			equal(t, "Content", resp.Content, tt.content)
			equal(t, "StopReason", resp.StopReason, tt.stop)
			equal(t, "ToolCalls", resp.ToolCalls, tt.toolCalls)
			if tt.content != "" {
				equal(t, "content events", rec.Texts(llm.EventContent), []string{`{"answer"`, `: 42}`})
			}
		})
	}
}

func TestUnsendableRequest(t *testing.T) {
	t.Parallel()
	tests := map[string]func(*llm.Request){
		"tool schema not JSON":   func(r *llm.Request) { r.Tools = []llm.ToolSpec{{Name: "t", InputSchema: json.RawMessage(`{"type":`)}} },
		"output schema not JSON": func(r *llm.Request) { r.OutputSchema = json.RawMessage(`nope`) },
		"arguments not an object": func(r *llm.Request) {
			r.Messages = append(r.Messages, llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "x", Name: "t", Arguments: json.RawMessage(`[1]`)}}})
		},
		"unknown role": func(r *llm.Request) { r.Messages = append(r.Messages, llm.Message{Role: "developer"}) },
	}
	for name, change := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv, p := setup(t)
			req := ask()
			change(&req)
			_, err := p.Complete(context.Background(), req, (&llmtest.Recorder{}).Emit)
			var pe *llm.Error
			if err == nil || errors.As(err, &pe) {
				t.Errorf("err = %v, want a plain error (no retry can fix the request)", err)
			}
			equal(t, "requests sent", len(srv.Requests()), 0)
		})
	}
}
