package runtime

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm"
)

// askUserName is the name the ask_user tool is offered under (config.ask_user).
const askUserName = "ask_user"

var askUserSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"question":{"type":"string","minLength":1,"description":"The question, as the user will read it."},` +
	`"choices":{"type":"array","items":{"type":"string"},"description":"Answers to offer, if the question has a few likely ones; the user may still answer otherwise."}},` +
	`"required":["question"]}`)

func askUserSpec() llm.ToolSpec {
	return llm.ToolSpec{Name: askUserName, InputSchema: askUserSchema,
		Description: "Asks the user a question and waits for the answer, which is this tool's result. Use it when only the user can give what you need (a missing detail, a choice, a confirmation)."}
}

// askUserTool answers a call of ask_user once the run resumes with the user's answer: the
// call itself always pauses the run first (see heldCalls).
type askUserTool struct{ r *run }

func (t *askUserTool) call(_ context.Context, c llm.ToolCall, sp *domain.Span) (string, toolOutcome, error) {
	sp.Kind = "question"
	q, _ := askArgs(c.Arguments)
	if q == "" {
		return "ask_user needs a non-empty question", toolError, nil
	}
	if t.r.state.Answer == "" {
		return "The user gave no answer.", toolOK, nil
	}
	return t.r.state.Answer, toolOK, nil
}

// askArgs reads an ask_user call's question and choices.
func askArgs(raw json.RawMessage) (question string, choices []string) {
	var a struct {
		Question string   `json:"question"`
		Choices  []string `json:"choices"`
	}
	_ = json.Unmarshal(raw, &a)
	return strings.TrimSpace(a.Question), a.Choices
}
