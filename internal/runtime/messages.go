package runtime

import (
	"context"
	"fmt"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm"
)

// render builds the model messages of a fresh pass: the system prompt, the chat history
// (trimmed oldest-first to fit the model's context window) and the new user message, as a
// "prompt" span when it renders a template (and a "history" span when history was trimmed).
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
	// The span is kept when rendering did something: a prompt template, or variables of the
	// system prompt filled from the input. Without either, its messages are the version's
	// system_prompt and the input's message, both stored already: a span row less per run
	// (BenchmarkRunBytes).
	if r.cfg.PromptID != "" || len(rendered.Variables) > 0 {
		sp.Attributes["variables"] = rendered.Variables
		sp.Attributes["missing"] = rendered.Missing
		r.end(sp, map[string]any{"messages": rendered.Messages}, nil)
	}
	if r.memoryOn() {
		text, err := r.recall(ctx, user.Content)
		if err != nil {
			return nil, err
		}
		system = withMemories(system, text)
	}

	var history []llm.Message
	if c := r.state.Chat; c != nil {
		if history, err = r.history(ctx, c.SessionID, system, user); err != nil {
			return nil, err
		}
	}
	if c := r.state.Conversation; c != nil {
		// The caller's system text comes after the agent's, its turns before the new message.
		if c.System != "" {
			system = append(system, llm.Message{Role: "system", Content: c.System})
		}
		history = append(history, c.Messages...)
	}
	msgs := append(append(system, history...), llm.Message{Role: "user", Content: user.Content})
	return msgs, nil
}

// history reads the newest messages of the chat session that fit the model's context window
// beside the system prompt, the new message and the reply budget (every message when the
// window is not known), and records what it left out as a "history" span.
func (r *run) history(ctx context.Context, sessionID string, system []llm.Message, user Message) ([]llm.Message, error) {
	m, err := r.modelEntry(ctx)
	if err != nil {
		return nil, err
	}
	fit := func(*domain.ChatMessage) bool { return true }
	window := 0
	if m != nil && m.ContextWindow > 0 {
		window = m.ContextWindow
		budget := r.cfg.MaxTokens
		if budget <= 0 {
			budget = min(4096, window/4)
		}
		used := llm.CountTokens(user.Content) + budget
		for _, m := range system {
			used += llm.CountTokens(m.Content)
		}
		fit = func(m *domain.ChatMessage) bool {
			used += llm.CountTokens(m.Content)
			return used <= window
		}
	}
	past, dropped, err := r.e.st.ChatHistoryTail(ctx, r.x.WorkspaceID, sessionID, fit)
	if err != nil {
		return nil, err
	}
	history := make([]llm.Message, len(past))
	for i, m := range past {
		history[i] = llm.Message{Role: m.Role, Content: m.Content}
	}
	if dropped > 0 {
		sp := r.span("history", "trim history", nil)
		sp.Attributes["dropped_messages"] = dropped
		sp.Attributes["context_window"] = window
		sp.Attributes["kept_messages"] = len(history)
		r.end(sp, map[string]any{"summary": fmt.Sprintf("left out the %d oldest messages to fit the %d-token context window", dropped, window)}, nil)
	}
	return history, nil
}
