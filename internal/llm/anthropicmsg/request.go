package anthropicmsg

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/agentplane/agentplane/internal/llm"
)

const (
	// defaultMaxTokens is sent when Request.MaxTokens is 0: the API requires max_tokens.
	defaultMaxTokens = 8192
	// outputTool is the forced tool whose input is a structured answer: the Messages API's
	// way to make the model produce JSON of a schema.
	outputTool = "output"
	// outputToolDescription tells the model what the output tool is for, which matters
	// when it may also call other tools.
	outputToolDescription = "Give your final answer by calling this tool; its input is the answer and must match the schema."
)

// emptyObjectSchema is the input schema of a tool that declares none: the API requires one.
var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// buildParams maps req onto the Messages API. It fails (before anything is sent) when a
// schema or a tool call's arguments are not JSON, which no retry could fix.
func buildParams(req *llm.Request) (anthropic.MessageNewParams, error) {
	p := anthropic.MessageNewParams{Model: anthropic.Model(req.Model), MaxTokens: int64(req.MaxTokens)}
	if p.MaxTokens <= 0 {
		p.MaxTokens = defaultMaxTokens
	}
	if req.Temperature != nil {
		p.Temperature = anthropic.Float(*req.Temperature)
	}
	var system []string
	for i := 0; i < len(req.Messages); i++ {
		m := &req.Messages[i]
		switch m.Role {
		case llm.RoleSystem:
			system = append(system, m.Content)
		case llm.RoleUser:
			p.Messages = append(p.Messages, anthropic.NewUserMessage(anthropic.NewTextBlock(m.Content)))
		case llm.RoleAssistant:
			blocks, err := assistantBlocks(m)
			if err != nil {
				return p, fmt.Errorf("message %d: %w", i, err)
			}
			if len(blocks) > 0 {
				p.Messages = append(p.Messages, anthropic.NewAssistantMessage(blocks...))
			}
		case llm.RoleTool:
			// The API wants the results of one turn's tool calls together, in one user message.
			var results []anthropic.ContentBlockParamUnion
			for ; i < len(req.Messages) && req.Messages[i].Role == llm.RoleTool; i++ {
				results = append(results, toolResult(&req.Messages[i]))
			}
			i--
			p.Messages = append(p.Messages, anthropic.NewUserMessage(results...))
		default:
			return p, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	if len(system) > 0 {
		p.System = []anthropic.TextBlockParam{{Text: strings.Join(system, "\n\n")}}
	}
	for _, t := range req.Tools {
		tool, err := toolParam(t.Name, t.Description, t.InputSchema)
		if err != nil {
			return p, err
		}
		p.Tools = append(p.Tools, tool)
	}
	if len(req.OutputSchema) > 0 {
		tool, err := toolParam(outputTool, outputToolDescription, req.OutputSchema)
		if err != nil {
			return p, fmt.Errorf("output schema: %w", err)
		}
		p.Tools = append(p.Tools, tool)
		if len(req.Tools) == 0 {
			p.ToolChoice = anthropic.ToolChoiceParamOfTool(outputTool)
		} else {
			// The model must call a tool: one of the caller's, or "output" to answer.
			p.ToolChoice = anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{}}
		}
	}
	return p, nil
}

// assistantBlocks is an assistant turn in the order the API checks it: its signed (or
// redacted) thinking, its text, then its tool calls. Thinking without a signature (another
// provider's reasoning) is dropped: the API would reject it.
func assistantBlocks(m *llm.Message) ([]anthropic.ContentBlockParamUnion, error) {
	var blocks []anthropic.ContentBlockParamUnion
	for _, th := range m.Thinking {
		switch {
		case th.Redacted != "":
			blocks = append(blocks, anthropic.NewRedactedThinkingBlock(th.Redacted))
		case th.Signature != "":
			blocks = append(blocks, anthropic.NewThinkingBlock(th.Signature, th.Text))
		}
	}
	if m.Content != "" {
		blocks = append(blocks, anthropic.NewTextBlock(m.Content))
	}
	for _, tc := range m.ToolCalls {
		args := bytes.TrimSpace(tc.Arguments)
		if len(args) == 0 {
			args = []byte("{}")
		}
		if args[0] != '{' || !json.Valid(args) {
			return nil, fmt.Errorf("the arguments of tool call %q are not a JSON object", tc.ID)
		}
		blocks = append(blocks, anthropic.NewToolUseBlock(tc.ID, json.RawMessage(args), tc.Name))
	}
	return blocks, nil
}

// toolResult is a tool message as a tool_result block; an empty result has no content,
// since the API rejects empty text blocks.
func toolResult(m *llm.Message) anthropic.ContentBlockParamUnion {
	r := anthropic.ToolResultBlockParam{ToolUseID: m.ToolCallID}
	if m.Content != "" {
		r.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: m.Content}}}
	}
	return anthropic.ContentBlockParamUnion{OfToolResult: &r}
}

// toolParam is one custom tool; its input_schema is sent exactly as given rather than
// rebuilt field by field into the SDK's schema type, so no keyword can be lost.
func toolParam(name, description string, schema json.RawMessage) (anthropic.ToolUnionParam, error) {
	schema = bytes.TrimSpace(schema)
	if len(schema) == 0 || string(schema) == "null" {
		schema = emptyObjectSchema
	}
	if !json.Valid(schema) {
		return anthropic.ToolUnionParam{}, fmt.Errorf("the input schema of tool %q is not JSON", name)
	}
	t := anthropic.ToolParam{Name: name, InputSchema: param.Override[anthropic.ToolInputSchemaParam](schema)}
	if description != "" {
		t.Description = anthropic.String(description)
	}
	return anthropic.ToolUnionParam{OfTool: &t}, nil
}
