// Package llm is the model-provider seam: the request and response types the execution
// engine speaks, the Provider interface every model backend implements (the simulated
// model in llm/simulated, the Chat Completions, Anthropic Messages and Gemini protocols in
// their own packages), the errors they report and the retry policy every call goes through.
package llm

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
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
	// EventMedia carries one piece of media of the reply (an image, say) in Event.Media;
	// the same media is in Response.Media once the call ends.
	EventMedia = "media"
)

// Message is one chat message of a conversation sent to a model.
// Roles are "system", "user", "assistant" and "tool".
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	Name       string     `json:"name,omitempty"`         // tool name, for role "tool"
	ToolCallID string     `json:"tool_call_id,omitempty"` // for role "tool"
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`   // for role "assistant"
	// Thinking is the reasoning an assistant turn came with, sent back as it was received:
	// Anthropic requires signed thinking blocks before the tool calls they led to.
	Thinking []Thinking `json:"thinking,omitempty"`
}

// Thinking is one block of a model's reasoning. Signature is the provider's opaque proof
// that the text is unaltered (Anthropic); empty where a provider has none.
type Thinking struct {
	Text      string `json:"text"`
	Signature string `json:"signature,omitempty"`
	// Redacted holds an Anthropic redacted_thinking block's data instead of Text.
	Redacted string `json:"redacted,omitempty"`
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
	// Signature is an opaque token the provider attached to the call and expects back with
	// it (Gemini's thought signature, base64); empty for most providers.
	Signature string `json:"signature,omitempty"`
}

// Request is one model call: the conversation so far plus the knobs that shape the answer.
type Request struct {
	Model        string
	Messages     []Message
	Tools        []ToolSpec
	Temperature  *float64
	MaxTokens    int             // 0 means the provider's default
	OutputSchema json.RawMessage // when set, the final answer's Content must be one JSON value of this schema
}

// Usage counts the tokens a call consumed, as the provider reported them.
// PromptTokens includes cached input and CompletionTokens includes reasoning.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// CachedTokens is the part of PromptTokens read from (or written to) the provider's cache.
	CachedTokens int `json:"cached_tokens,omitempty"`
	// ReasoningTokens is the part of CompletionTokens spent on reasoning.
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
	// Estimated is set when the server reported no usage and the counts are CountTokens's.
	Estimated bool `json:"estimated,omitempty"`
}

// Response is the outcome of one model call. StopReason is StopEnd, StopToolCalls or
// StopLength; ToolCalls is set only with StopToolCalls.
type Response struct {
	Content    string     `json:"content"`
	Thinking   []Thinking `json:"thinking,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	Usage      Usage      `json:"usage"`
	StopReason string     `json:"stop_reason"`
	// Media is the media the reply carried besides its text (images a model generated),
	// in the order received.
	Media []Media `json:"media,omitempty"`
}

// Media is one piece of media of a model's reply: its media type and its bytes.
type Media struct {
	MimeType string `json:"mime_type"`
	Data     []byte `json:"data"`
}

// Event is one streamed delta of a model call: Kind is EventThinking or EventContent (with
// Text), or EventMedia (with Media).
type Event struct {
	Kind  string `json:"kind"`
	Text  string `json:"text"`
	Media *Media `json:"media,omitempty"`
}

// Provider answers one model request, streaming deltas through emit as they are produced.
// If emit returns an error, Complete stops and returns it. ctx cancellation must stop
// Complete promptly (within a few ms) and close any upstream connection. Failures of the
// provider itself are reported as *Error, so that Call can decide whether to retry.
type Provider interface {
	Complete(ctx context.Context, req Request, emit func(Event) error) (*Response, error)
}

// ModelLister is a Provider that can list the models its credential may use: how a
// credential is validated.
type ModelLister interface {
	ListModels(ctx context.Context) ([]string, error)
}

// Endpoint is where and as whom a protocol implementation calls a provider.
type Endpoint struct {
	// Provider names the service for messages, e.g. "openai", "deepseek" or "anthropic".
	Provider string
	// BaseURL is the API root: with the version path for Chat Completions
	// ("https://api.openai.com/v1"), the host root for Anthropic and Gemini.
	BaseURL string
	// APIKey is the credential's value; it never appears in an error.
	APIKey string
	// HTTPClient carries every request; nil uses a shared client with pooled connections.
	HTTPClient *http.Client
}

// sharedClient carries provider calls of Endpoints without their own client. Its pool
// keeps enough idle connections per host for many concurrent runs (net/http's default of
// 2 would open and close a connection for nearly every call under load); it has no
// overall timeout because a streamed answer may take minutes (CallOptions.Timeout bounds
// a call instead).
var sharedClient = &http.Client{Transport: NewTransport()}

// NewTransport is the transport of provider calls: a pool sized for many concurrent runs.
func NewTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 1024
	t.MaxIdleConnsPerHost = 256
	t.IdleConnTimeout = 90 * time.Second
	t.ResponseHeaderTimeout = 0
	return t
}

// Client is the HTTP client to call the endpoint with.
func (ep Endpoint) Client() *http.Client {
	if ep.HTTPClient != nil {
		return ep.HTTPClient
	}
	return sharedClient
}
