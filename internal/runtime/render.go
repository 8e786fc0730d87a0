// Package runtime is agentplane's execution engine. This file builds the messages a run
// sends to the model from an agent version's configuration and the run's input.
package runtime

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/prompttmpl"
	"github.com/agentplane/agentplane/internal/store"
)

// Message is one chat message sent to or received from a model.
type Message struct {
	Role    string `json:"role" enum:"system,user,assistant,tool"`
	Content string `json:"content"`
}

// Rendered is the outcome of rendering an agent's prompt for one input.
type Rendered struct {
	Messages  []Message
	Variables []string // variables the system template uses
	Missing   []string // of those, the ones the input does not supply
}

// userKeys are the input fields, in order of preference, that hold the user's message.
var userKeys = []string{"message", "question", "query", "prompt", "text", "input", "content"}

// Render builds the system message (the prompt template or system_prompt, rendered with the
// input as variables) and the user message (the input's message field, or the input as JSON).
func Render(ctx context.Context, st PromptStore, ws string, cfg *domain.AgentConfig, input map[string]any) (*Rendered, error) {
	text := cfg.SystemPrompt
	if cfg.PromptID != "" {
		t, err := st.PromptTemplate(ctx, ws, cfg.PromptID, cfg.PromptVersionID)
		if err != nil {
			return nil, err
		}
		text = t
	}
	out := &Rendered{Variables: []string{}, Missing: []string{}}
	if text != "" {
		tmpl, err := prompttmpl.Parse(text)
		if err != nil {
			return nil, &store.ReferenceError{Field: "config.prompt_id", Resource: "valid prompt template", ID: cfg.PromptID}
		}
		system, err := tmpl.Render(input)
		if err != nil {
			return nil, fmt.Errorf("render system prompt: %w", err)
		}
		out.Variables, out.Missing = tmpl.Variables(), tmpl.Missing(input)
		out.Messages = append(out.Messages, Message{Role: "system", Content: system})
	}
	out.Messages = append(out.Messages, Message{Role: "user", Content: UserText(input)})
	return out, nil
}

// UserText picks the user's message out of an input object.
func UserText(input map[string]any) string {
	for _, k := range userKeys {
		if s, ok := input[k].(string); ok && s != "" {
			return s
		}
	}
	b, _ := json.Marshal(input)
	return string(b)
}
