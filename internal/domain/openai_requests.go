package domain

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/agentplane/agentplane/internal/schemacheck"
)

// OpenAIMessage is one message of an OpenAI-compatible request. Content is a string or an
// array of text parts.
type OpenAIMessage struct {
	Role    string          `json:"role" doc:"system, developer, user or assistant."`
	Content json.RawMessage `json:"content" doc:"A string, or an array of {\"type\": \"text\", \"text\"} parts."`
	Name    string          `json:"name,omitempty"`
}

// OpenAIStreamOptions are a chat completion stream's options.
type OpenAIStreamOptions struct {
	IncludeUsage bool `json:"include_usage,omitempty" doc:"Send a last chunk with the run's token usage (and choices [])."`
}

// OpenAIJSONSchema is the json_schema of a response_format.
type OpenAIJSONSchema struct {
	Name   string          `json:"name,omitempty"`
	Schema json.RawMessage `json:"schema,omitempty"`
	Strict *bool           `json:"strict,omitempty"`
}

// OpenAIResponseFormat asks for text or for JSON output, optionally matching a schema.
type OpenAIResponseFormat struct {
	Type       string            `json:"type" doc:"text, json_object or json_schema."`
	JSONSchema *OpenAIJSONSchema `json:"json_schema,omitempty"`
}

// OutputSchema is the JSON Schema the format asks the output to match: nil for text (or no
// format), an object for json_object, the given schema for json_schema.
func (f *OpenAIResponseFormat) OutputSchema() (json.RawMessage, error) {
	if f == nil {
		return nil, nil
	}
	switch f.Type {
	case "", "text":
		return nil, nil
	case "json_object":
		return json.RawMessage(`{"type":"object"}`), nil
	case "json_schema":
		if f.JSONSchema == nil || !schemaSet(f.JSONSchema.Schema) {
			return nil, Invalid("response_format.json_schema.schema", "is required with type json_schema")
		}
		if _, err := schemacheck.Compile(f.JSONSchema.Schema); err != nil {
			return nil, Invalid("response_format.json_schema.schema", "is not a valid JSON Schema: %v", err)
		}
		return f.JSONSchema.Schema, nil
	}
	return nil, Invalid("response_format.type", "must be text, json_object or json_schema, not %q", f.Type)
}

// schemaSet reports whether a schema field is set (not absent, not null).
func schemaSet(raw json.RawMessage) bool {
	t := strings.TrimSpace(string(raw))
	return t != "" && t != "null"
}

// OpenAIChatRequest is a chat completion request of the OpenAI-compatible API. The document
// checks its shape; Validate holds the rules that need no agent, the API the rest (the
// messages' content, the model's agent and its input_schema).
type OpenAIChatRequest struct {
	Model          string                `json:"model" minLength:"1" pattern:"\\S" doc:"The agent: its id, its name, or AGENT@N for its version N."`
	Messages       []OpenAIMessage       `json:"messages" minItems:"1" doc:"The conversation; the last message is the user's. System and developer messages are added after the agent's own system prompt."`
	Stream         bool                  `json:"stream,omitempty" doc:"Answer with a stream of chat.completion.chunk objects ending in data: [DONE]."`
	StreamOptions  *OpenAIStreamOptions  `json:"stream_options,omitempty"`
	User           string                `json:"user,omitempty" maxLength:"200" doc:"Recorded as the execution's end_user_id."`
	Metadata       map[string]any        `json:"metadata,omitempty" doc:"Kept as the execution's metadata."`
	ResponseFormat *OpenAIResponseFormat `json:"response_format,omitempty" doc:"json_schema (or json_object) gives the run an output schema when the agent has none."`
	Tools          json.RawMessage       `json:"tools,omitempty" doc:"Not supported: the agent's own tools apply (a request with tools is a 422)."`
}

// Validate holds a chat completion's rules: no client-side tools, the messages' roles, a
// response_format that can be met and a model that names an agent (and a version number
// after @).
func (r *OpenAIChatRequest) Validate() error {
	if err := FirstErr(noClientTools(r.Tools), MaxLen("user", r.User, 200), CheckOpenAIMessages(r.Messages)); err != nil {
		return err
	}
	if _, err := r.ResponseFormat.OutputSchema(); err != nil {
		return err
	}
	_, _, err := ParseModelRef(r.Model)
	return err
}

// OpenAIResponsesRequest is a request of the OpenAI-compatible Responses API. The document
// checks its shape; Validate holds the rules that need no agent, the API the rest.
type OpenAIResponsesRequest struct {
	Model              string          `json:"model" minLength:"1" pattern:"\\S" doc:"The agent: its id, its name, or AGENT@N for its version N."`
	Input              json.RawMessage `json:"input" doc:"A string (the user's message), or an array of messages {role, content} whose last one is the user's."`
	Instructions       string          `json:"instructions,omitempty" doc:"Added after the agent's own system prompt."`
	PreviousResponseID string          `json:"previous_response_id,omitempty" doc:"Continue the conversation of this response: its chat session's history comes first."`
	Store              *bool           `json:"store,omitempty" doc:"Keep the turn in a chat session (default true); false keeps none, and the response cannot be continued."`
	Stream             bool            `json:"stream,omitempty" doc:"Answer with the Responses event stream (response.created … response.completed)."`
	User               string          `json:"user,omitempty" maxLength:"200" doc:"Recorded as the end_user_id of the execution and of a new session."`
	Metadata           map[string]any  `json:"metadata,omitempty" doc:"Kept as the execution's metadata."`
	Tools              json.RawMessage `json:"tools,omitempty" doc:"Not supported: the agent's own tools apply (a request with tools is a 422)."`
}

// Stored reports whether the response is kept in a chat session (store is true or left out).
func (r *OpenAIResponsesRequest) Stored() bool { return r.Store == nil || *r.Store }

// Validate holds a response request's rules: no client-side tools, a model that names an
// agent (and a version number after @), and a previous response only with a stored one.
func (r *OpenAIResponsesRequest) Validate() error {
	if err := noClientTools(r.Tools); err != nil {
		return err
	}
	if _, _, err := ParseModelRef(r.Model); err != nil {
		return err
	}
	if !r.Stored() && r.PreviousResponseID != "" {
		return Invalid("previous_response_id", "needs a stored conversation: store false keeps none")
	}
	return nil
}

// CheckOpenAIMessages holds the rules of a conversation's roles: at least one message, each
// but the last a system, developer, user or assistant message, the last the user's.
func CheckOpenAIMessages(msgs []OpenAIMessage) error {
	if len(msgs) == 0 {
		return Invalid("messages", "must hold at least one message, the last one the user's")
	}
	for i, m := range msgs[:len(msgs)-1] {
		switch m.Role {
		case "system", "developer", "user", "assistant":
		default:
			return Invalid("messages["+strconv.Itoa(i)+"].role", "%q is not supported: system, developer, user or assistant (the agent's own tools apply)", m.Role)
		}
	}
	if last := msgs[len(msgs)-1]; last.Role != "user" {
		return Invalid("messages["+strconv.Itoa(len(msgs)-1)+"].role", "the last message must be the user's, not %q", last.Role)
	}
	return nil
}

// noClientTools refuses tools of the client's: the agent's own tools apply.
func noClientTools(tools json.RawMessage) error {
	if len(tools) > 0 && string(tools) != "null" && string(tools) != "[]" {
		return Invalid("tools", "client-side tools are not supported: the agent's own tools apply")
	}
	return nil
}

// ParseModelRef reads an OpenAI model string: an agent's id or name (ref), followed by @N
// for its version N (version 0 when there is none, meaning the active version).
func ParseModelRef(model string) (ref string, version int, err error) {
	if strings.TrimSpace(model) == "" {
		return "", 0, Invalid("model", "is required: an agent id, an agent name, or AGENT@N")
	}
	at := strings.LastIndexByte(model, '@')
	if at <= 0 {
		return model, 0, nil
	}
	n, err := strconv.Atoi(model[at+1:])
	if err != nil || n < 1 {
		return "", 0, Invalid("model", "%q: the part after @ must be a version number (1 or more)", model)
	}
	return model[:at], n, nil
}
