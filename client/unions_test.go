package client

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestUnions: the helpers of the oneOf fields write what the document's schemas take.
func TestUnions(t *testing.T) {
	for name, tc := range map[string]struct {
		value any
		want  string
	}{
		"AllTools":      {MCPTools("t1", "t2"), `["t1","t2"]`},
		"SomeTools":     {MCPToolNames("t1", "lookup"), `{"mcp_tool_id":"t1","names":["lookup"]}`},
		"FailAlways":    {Simulation{Fail: FailAlways(), FailMessage: "down"}, `{"fail":true,"fail_message":"down"}`},
		"FailModels":    {Simulation{Fail: FailModels(map[string]int{"gpt-4o": 503})}, `{"fail":{"gpt-4o":503}}`},
		"NoFailure":     {Simulation{LatencyMs: Ptr[int64](5)}, `{"latency_ms":5}`},
		"NullClears":    {ScoreConfigUpdateRequest{Max: Null[float64]()}, `{"max":null}`},
		"SetSends":      {ScoreConfigUpdateRequest{Min: Set(0.0)}, `{"min":0}`},
		"UnsetLeftOut":  {ScoreConfigUpdateRequest{}, `{}`},
		"ZeroIsAValue":  {AgentConfig{Model: "m", Temperature: Ptr(0.0)}, `{"model":"m","temperature":0}`},
		"EmptyLeftOut":  {AgentConfig{Model: "m"}, `{"model":"m"}`},
		"FalseIsAValue": {GuardrailCreateRequest{Enabled: Ptr(false)}, `"enabled":false`},
	} {
		t.Run(name, func(t *testing.T) {
			b, err := json.Marshal(tc.value)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(b); got != tc.want && !(tc.want[0] == '"' && strings.Contains(got, tc.want)) {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}
