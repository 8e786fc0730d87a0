// Package llm is the model-provider seam: the request and response types the execution
// engine speaks, the Provider interface every model backend implements, and the simulated
// provider that is the default model of the emulator and of a fresh server.
package llm

import (
	"context"
	"encoding/json"
)

// Message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Stop reasons reported in Response.StopReason.
const (
	StopEnd       = "stop"       // the model finished its answer
	StopToolCalls = "tool_calls" // the model wants the caller to run ToolCalls and ask again
	StopLength    = "length"     // the answer was cut at Request.MaxTokens
)

// Event kinds streamed through the emit callback of Provider.Complete.
const (
	EventThinking = "thinking" // the model's reasoning, never part of Response.Content
	EventContent  = "content"  // a delta of Response.Content
)

// Message is one chat message of a conversation sent to a model.
// Roles are "system", "user", "assistant" and "tool".
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	Name       string     `json:"name,omitempty"`         // tool name, for role "tool"
	ToolCallID string     `json:"tool_call_id,omitempty"` // for role "tool"
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`   // for role "assistant"
}

// ToolSpec describes a tool the model may call; InputSchema is a JSON Schema for the
// call's arguments (empty means "any object").
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// ToolCall is one tool invocation requested by the model; Arguments is a JSON object.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Simulation tunes the simulated provider for one request: a delay before every streamed
// event, and a forced failure after some partial output. Other providers ignore it.
type Simulation struct {
	LatencyMS   int    `json:"latency_ms,omitempty"`
	Fail        bool   `json:"fail,omitempty"`
	FailMessage string `json:"fail_message,omitempty"`
}

// Request is one model call: the conversation so far plus the knobs that shape the answer.
type Request struct {
	Model        string
	Messages     []Message
	Tools        []ToolSpec
	Temperature  *float64
	MaxTokens    int             // 0 means no limit
	OutputSchema json.RawMessage // when set, the final answer's Content must be one JSON object
	Simulation   *Simulation     // honoured by the simulated provider only
}

// Usage counts the tokens a call consumed, as reported (or, when simulated, estimated).
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Response is the outcome of one model call. StopReason is StopEnd, StopToolCalls or
// StopLength; ToolCalls is set only with StopToolCalls.
type Response struct {
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	Usage      Usage      `json:"usage"`
	StopReason string     `json:"stop_reason"`
}

// Event is one streamed delta of a model call: Kind is EventThinking or EventContent.
type Event struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// Provider answers one model request, streaming deltas through emit as they are produced.
// If emit returns an error, Complete stops and returns it. ctx cancellation must stop
// Complete promptly (within a few ms), including during simulated latency.
type Provider interface {
	Complete(ctx context.Context, req Request, emit func(Event) error) (*Response, error)
}

// SimulatedFailureError is the error the simulated provider returns when
// Request.Simulation.Fail is set; its text is exactly the configured message.
type SimulatedFailureError struct {
	Message string
}

// Error returns the configured failure message.
func (e *SimulatedFailureError) Error() string { return e.Message }
