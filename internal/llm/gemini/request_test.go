package gemini_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/llm/llmtest"
)

// bodyEquals fails t unless the JSON body the fake received equals want.
func bodyEquals(t *testing.T, got map[string]any, want string) {
	t.Helper()
	var w map[string]any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, w) {
		g, _ := json.MarshalIndent(got, "", "  ")
		e, _ := json.MarshalIndent(w, "", "  ")
		t.Errorf("request body:\n%s\nwant:\n%s", g, e)
	}
}

// TestRequestMapping checks the whole body of a multi-turn request. The SDK leaves out
// empty args (omitempty on a map), so the clock call goes back without "args"; thinking
// is not sent back (Gemini needs only the signatures on the calls).
func TestRequestMapping(t *testing.T) {
	t.Parallel()
	srv, p := start(t)
	srv.Push(llmtest.Reply{Text: []string{"You're welcome."}})
	temp := 0.25
	req := llm.Request{
		Model:       testModel,
		Temperature: &temp,
		MaxTokens:   512,
		Tools: []llm.ToolSpec{
			{Name: "weather", Description: "Current weather of a city.", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
			{Name: "clock"},
		},
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "You are terse."},
			{Role: llm.RoleUser, Content: "Weather in Paris and Rome, and the time?"},
			{Role: llm.RoleAssistant, Content: "Checking.", Thinking: []llm.Thinking{{Text: "two cities"}}, ToolCalls: []llm.ToolCall{
				{ID: "call_1", Name: "weather", Arguments: json.RawMessage(`{"city":"Paris"}`), Signature: "c2lnLTE="},
				{ID: "call_2", Name: "weather", Arguments: json.RawMessage(`{"city":"Rome"}`)},
				{ID: "call_3", Name: "clock", Arguments: json.RawMessage(`{}`)},
			}},
			{Role: llm.RoleTool, ToolCallID: "call_1", Name: "weather", Content: `{"temp_c":21,"sky":"clear"}`},
			{Role: llm.RoleTool, ToolCallID: "call_2", Content: "sunny, 25°C"},
			{Role: llm.RoleTool, ToolCallID: "call_3", Name: "clock", Content: `[12,30]`},
			{Role: llm.RoleAssistant, Content: "Paris 21°C, Rome 25°C, 12:30."},
			{Role: llm.RoleUser, Content: "Thanks"},
		},
	}
	if _, err := p.Complete(context.Background(), req, discard); err != nil {
		t.Fatal(err)
	}
	bodyEquals(t, srv.Requests()[0].Body, `{
	  "systemInstruction": {"role": "user", "parts": [{"text": "You are terse."}]},
	  "contents": [
	    {"role": "user", "parts": [{"text": "Weather in Paris and Rome, and the time?"}]},
	    {"role": "model", "parts": [
	      {"text": "Checking."},
	      {"functionCall": {"id": "call_1", "name": "weather", "args": {"city": "Paris"}}, "thoughtSignature": "c2lnLTE="},
	      {"functionCall": {"id": "call_2", "name": "weather", "args": {"city": "Rome"}}},
	      {"functionCall": {"id": "call_3", "name": "clock"}}
	    ]},
	    {"role": "user", "parts": [
	      {"functionResponse": {"id": "call_1", "name": "weather", "response": {"temp_c": 21, "sky": "clear"}}},
	      {"functionResponse": {"id": "call_2", "name": "weather", "response": {"result": "sunny, 25°C"}}},
	      {"functionResponse": {"id": "call_3", "name": "clock", "response": {"result": [12, 30]}}}
	    ]},
	    {"role": "model", "parts": [{"text": "Paris 21°C, Rome 25°C, 12:30."}]},
	    {"role": "user", "parts": [{"text": "Thanks"}]}
	  ],
	  "tools": [{"functionDeclarations": [
	    {"name": "weather", "description": "Current weather of a city.",
	     "parametersJsonSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
	    {"name": "clock"}
	  ]}],
	  "generationConfig": {"temperature": 0.25, "maxOutputTokens": 512}
	}`)
}

func TestStructuredOutput(t *testing.T) {
	t.Parallel()
	schema := `{"type":"object","properties":{"city":{"type":"string"},"temp_c":{"type":"number"}},"required":["city","temp_c"]}`
	t.Run("native JSON mode", func(t *testing.T) {
		t.Parallel()
		srv, p := start(t)
		srv.Push(llmtest.Reply{Text: []string{`{"city":`, `"Paris",`, `"temp_c":21}`}})
		req := ask("Weather in Paris as JSON")
		req.OutputSchema = json.RawMessage(schema)
		var rec llmtest.Recorder
		resp, err := p.Complete(context.Background(), req, rec.Emit)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Content != `{"city":"Paris","temp_c":21}` || len(rec.Texts(llm.EventContent)) != 3 {
			t.Errorf("content %q, events %+v", resp.Content, rec.Events)
		}
		bodyEquals(t, srv.Requests()[0].Body, `{
		  "contents": [{"role": "user", "parts": [{"text": "Weather in Paris as JSON"}]}],
		  "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": `+schema+`}
		}`)
	})
	t.Run("not with tools", func(t *testing.T) {
		t.Parallel()
		srv, p := start(t)
		srv.Push(llmtest.Reply{Text: []string{`{}`}})
		req := ask("x")
		req.OutputSchema = json.RawMessage(schema)
		req.Tools = []llm.ToolSpec{{Name: "clock"}}
		if _, err := p.Complete(context.Background(), req, discard); err != nil {
			t.Fatal(err)
		}
		if gc, _ := srv.Requests()[0].Body["generationConfig"].(map[string]any); len(gc) != 0 {
			t.Errorf("generationConfig = %v, want no JSON mode with tools", gc)
		}
	})
	t.Run("invalid schema", func(t *testing.T) {
		t.Parallel()
		srv, p := start(t)
		req := ask("x")
		req.OutputSchema = json.RawMessage(`{"type":`)
		if _, err := p.Complete(context.Background(), req, discard); err == nil {
			t.Error("no error for an invalid schema")
		}
		if n := len(srv.Requests()); n != 0 {
			t.Errorf("the fake got %d requests", n)
		}
	})
}
