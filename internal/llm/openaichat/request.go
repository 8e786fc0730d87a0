package openaichat

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/agentplane/agentplane/internal/llm"
)

// emptySchema stands for a tool without an InputSchema: OpenAI rejects a function
// whose parameters are not an object schema.
var emptySchema = shared.FunctionParameters{"type": "object", "properties": map[string]any{}}

// buildParams maps req onto the wire's request. Its errors (an unknown role, a schema
// that is not JSON) are the caller's, so they are plain errors that llm.Call does not
// retry.
func buildParams(ep llm.Endpoint, req *llm.Request) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{
		Model:    req.Model,
		Messages: make([]openai.ChatCompletionMessageParamUnion, 0, len(req.Messages)),
		// Without include_usage the stream reports no usage at all.
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	for i := range req.Messages {
		m, err := message(&req.Messages[i])
		if err != nil {
			return p, fmt.Errorf("openaichat: message %d: %w", i, err)
		}
		p.Messages = append(p.Messages, m)
	}
	for i := range req.Tools {
		t := &req.Tools[i]
		params, err := toolParameters(t.InputSchema)
		if err != nil {
			return p, fmt.Errorf("openaichat: tool %q: %w", t.Name, err)
		}
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: params}
		if t.Description != "" {
			fn.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	if req.Temperature != nil {
		p.Temperature = openai.Float(*req.Temperature)
	}
	if req.MaxTokens > 0 {
		// OpenAI's reasoning models reject max_tokens; older compatible servers only
		// know max_tokens.
		if ep.Provider == "openai" {
			p.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			p.MaxTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	if len(bytes.TrimSpace(req.OutputSchema)) > 0 {
		if !json.Valid(req.OutputSchema) {
			return p, fmt.Errorf("openaichat: the output schema is not valid JSON")
		}
		// strict stays off: it needs every property required and no additional ones,
		// which user schemas rarely say.
		p.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
				Name:   "output",
				Schema: json.RawMessage(req.OutputSchema),
				Strict: openai.Bool(false),
			},
		}
	}
	return p, nil
}

// message maps one conversation message. An assistant turn's thinking is not sent back:
// Chat Completions has no field for it (DeepSeek rejects reasoning_content in input).
func message(m *llm.Message) (openai.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case llm.RoleSystem:
		return openai.SystemMessage(m.Content), nil
	case llm.RoleUser:
		return openai.UserMessage(m.Content), nil
	case llm.RoleTool:
		return openai.ToolMessage(m.Content, m.ToolCallID), nil
	case llm.RoleAssistant:
		var a openai.ChatCompletionAssistantMessageParam
		// Content may be omitted only when the turn is tool calls; some servers reject
		// an assistant message with neither.
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = openai.String(m.Content)
		}
		for _, tc := range m.ToolCalls {
			args := string(bytes.TrimSpace(tc.Arguments))
			if args == "" {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID:       tc.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args},
				},
			})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	}
	return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("unknown role %q", m.Role)
}

// toolParameters turns an InputSchema into the function's parameters. The top level is
// split into raw values so that nested objects (the properties) keep their order, which
// models follow when they write the arguments.
func toolParameters(schema json.RawMessage) (shared.FunctionParameters, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		return emptySchema, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(schema, &top); err != nil {
		return nil, fmt.Errorf("the input schema is not a JSON object: %w", err)
	}
	if top == nil { // "null"
		return emptySchema, nil
	}
	params := make(shared.FunctionParameters, len(top))
	for k, v := range top {
		params[k] = v
	}
	return params, nil
}
