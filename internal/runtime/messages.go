package runtime

import (
	"context"
	"fmt"

	"github.com/agentplane/agentplane/internal/llm"
)

// render builds the model messages of a fresh pass: the system prompt, the chat history
// (trimmed oldest-first to fit the model's context window) and the new user message, as a
// "prompt" span (and a "history" span when history was trimmed).
func (r *run) render(ctx context.Context) ([]llm.Message, error) {
	sp := r.span("prompt", "render prompt", map[string]any{"prompt_id": r.cfg.PromptID, "input": r.x.Input})
	rendered, err := Render(ctx, r.e.st, r.x.WorkspaceID, r.cfg, r.x.Input)
	if err != nil {
		r.end(sp, nil, err)
		return nil, err
	}
	var system []llm.Message
	user := rendered.Messages[len(rendered.Messages)-1]
	for _, m := range rendered.Messages[:len(rendered.Messages)-1] {
		system = append(system, llm.Message{Role: m.Role, Content: m.Content})
	}
	sp.Attributes["variables"] = rendered.Variables
	sp.Attributes["missing"] = rendered.Missing
	r.end(sp, map[string]any{"messages": rendered.Messages}, nil)
	if r.memoryOn() {
		text, err := r.recall(ctx, user.Content)
		if err != nil {
			return nil, err
		}
		system = withMemories(system, text)
	}

	var history []llm.Message
	if c := r.state.Chat; c != nil {
		past, err := r.e.st.ChatHistory(ctx, r.x.WorkspaceID, c.SessionID)
		if err != nil {
			return nil, err
		}
		for _, m := range past {
			history = append(history, llm.Message{Role: m.Role, Content: m.Content})
		}
		if history, err = r.trimHistory(ctx, system, history, user); err != nil {
			return nil, err
		}
	}
	msgs := append(append(system, history...), llm.Message{Role: "user", Content: user.Content})
	return msgs, nil
}

// trimHistory drops the oldest history messages until system + history + the new message
// + the reply budget fit the model's context window, and records what it dropped.
func (r *run) trimHistory(ctx context.Context, system, history []llm.Message, user Message) ([]llm.Message, error) {
	m, err := r.modelEntry(ctx)
	if err != nil || m == nil || m.ContextWindow <= 0 {
		return history, err
	}
	window := m.ContextWindow
	budget := r.cfg.MaxTokens
	if budget <= 0 {
		budget = min(4096, window/4)
	}
	used := llm.CountTokens(user.Content) + budget
	for _, m := range system {
		used += llm.CountTokens(m.Content)
	}
	total := used
	for _, m := range history {
		total += llm.CountTokens(m.Content)
	}
	dropped, droppedTokens := 0, 0
	for total > window && len(history) > 0 {
		t := llm.CountTokens(history[0].Content)
		total -= t
		droppedTokens += t
		history = history[1:]
		dropped++
	}
	if dropped > 0 {
		sp := r.span("history", "trim history", nil)
		sp.Attributes["dropped_messages"] = dropped
		sp.Attributes["dropped_tokens"] = droppedTokens
		sp.Attributes["context_window"] = window
		sp.Attributes["kept_messages"] = len(history)
		r.end(sp, map[string]any{"summary": fmt.Sprintf("dropped the %d oldest messages (%d tokens) to fit the %d-token context window", dropped, droppedTokens, window)}, nil)
	}
	return history, nil
}
