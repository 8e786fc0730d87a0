package gemini

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"google.golang.org/genai"

	"github.com/agentplane/agentplane/internal/llm"
)

// buildRequest maps req onto the SDK's contents and config. Thought summaries are not
// asked for (thinkingConfig.includeThoughts): models without thinking reject that with a
// 400, so reasoning arrives only from models that send it unasked. Raw JSON (schemas, tool
// arguments and results) is decoded here and rejected when invalid: the SDK copies its
// input through json.Marshal and ignores that error, so invalid JSON would otherwise
// be dropped from the request without a word.
func buildRequest(req *llm.Request) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	config := &genai.GenerateContentConfig{
		// Otherwise the SDK sends the request again by itself when a stream stops with
		// a continuation token, or drops after one; retries are llm.Call's.
		AutomaticContinuation: genai.Ptr(false),
	}
	if req.Temperature != nil {
		config.Temperature = genai.Ptr(float32(*req.Temperature))
	}
	if req.MaxTokens > 0 {
		config.MaxOutputTokens = int32(min(req.MaxTokens, 1<<31-1))
	}
	if len(req.Tools) > 0 {
		decls := make([]*genai.FunctionDeclaration, 0, len(req.Tools))
		for _, t := range req.Tools {
			d := &genai.FunctionDeclaration{Name: t.Name, Description: t.Description}
			if len(bytes.TrimSpace(t.InputSchema)) > 0 {
				schema, err := decodeJSON(t.InputSchema)
				if err != nil {
					return nil, nil, fmt.Errorf("gemini: the input schema of tool %q: %w", t.Name, err)
				}
				d.ParametersJsonSchema = schema
			}
			decls = append(decls, d)
		}
		config.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
	} else if len(bytes.TrimSpace(req.OutputSchema)) > 0 {
		// Native structured output only without tools: several Gemini models reject
		// function calling combined with a JSON response type, and the platform
		// validates the final answer against OutputSchema anyway.
		schema, err := decodeJSON(req.OutputSchema)
		if err != nil {
			return nil, nil, fmt.Errorf("gemini: the output schema: %w", err)
		}
		config.ResponseMIMEType = "application/json"
		config.ResponseJsonSchema = schema
	}

	var contents []*genai.Content
	names := map[string]string{} // tool call id → name, for results that lack a name
	var results *genai.Content   // the user content collecting consecutive tool results
	for i := range req.Messages {
		m := &req.Messages[i]
		if m.Role != llm.RoleTool {
			results = nil
		}
		switch m.Role {
		case llm.RoleSystem:
			if config.SystemInstruction == nil {
				config.SystemInstruction = &genai.Content{Role: genai.RoleUser}
			}
			config.SystemInstruction.Parts = append(config.SystemInstruction.Parts, &genai.Part{Text: m.Content})
		case llm.RoleAssistant:
			c, err := modelContent(m, names)
			if err != nil {
				return nil, nil, err
			}
			if c != nil {
				contents = append(contents, c)
			}
		case llm.RoleTool:
			part := functionResponse(m, names)
			if results == nil {
				results = &genai.Content{Role: genai.RoleUser}
				contents = append(contents, results)
			}
			results.Parts = append(results.Parts, part)
		default:
			contents = append(contents, &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: m.Content}}})
		}
	}
	return contents, config, nil
}

// modelContent maps an assistant turn: its text, then its function calls with the
// thought signatures Gemini requires back on them. It is nil for an empty turn, which
// the API would reject.
func modelContent(m *llm.Message, names map[string]string) (*genai.Content, error) {
	c := &genai.Content{Role: genai.RoleModel}
	if m.Content != "" {
		c.Parts = append(c.Parts, &genai.Part{Text: m.Content})
	}
	for _, tc := range m.ToolCalls {
		names[tc.ID] = tc.Name
		args := map[string]any{}
		if len(bytes.TrimSpace(tc.Arguments)) > 0 {
			v, err := decodeJSON(tc.Arguments)
			if err != nil {
				return nil, fmt.Errorf("gemini: the arguments of tool call %q: %w", tc.ID, err)
			}
			obj, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("gemini: the arguments of tool call %q are not a JSON object", tc.ID)
			}
			args = obj
		}
		part := &genai.Part{FunctionCall: &genai.FunctionCall{ID: tc.ID, Name: tc.Name, Args: args}}
		if tc.Signature != "" {
			sig, err := base64.StdEncoding.DecodeString(tc.Signature)
			if err != nil {
				return nil, fmt.Errorf("gemini: the signature of tool call %q: %w", tc.ID, err)
			}
			part.ThoughtSignature = sig
		}
		c.Parts = append(c.Parts, part)
	}
	if len(c.Parts) == 0 {
		return nil, nil
	}
	return c, nil
}

// functionResponse maps a tool result: a JSON object result is the response itself;
// any other JSON value, or plain text, is wrapped as {"result": …}.
func functionResponse(m *llm.Message, names map[string]string) *genai.Part {
	name := m.Name
	if name == "" {
		name = names[m.ToolCallID]
	}
	var response map[string]any
	if v, err := decodeJSON([]byte(m.Content)); err == nil {
		if obj, ok := v.(map[string]any); ok {
			response = obj
		} else {
			response = map[string]any{"result": v}
		}
	} else {
		response = map[string]any{"result": m.Content}
	}
	return &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: m.ToolCallID, Name: name, Response: response}}
}

// decodeJSON decodes one JSON value. Numbers become float64 here or in the SDK anyway
// (it copies every request through map[string]any), so integers beyond 2^53 lose
// precision on this wire.
func decodeJSON(raw []byte) (any, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}
