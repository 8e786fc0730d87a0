package api

import (
	"net/http"
	"strings"

	"github.com/agentplane/agentplane/internal/domain"
)

// The wire types of the OpenAI-compatible API (/api/v1/openai): the subset of OpenAI's
// Chat Completions, Responses and Models objects that an agent run can fill.

// OpenAIModel is an agent listed as a model.
type OpenAIModel struct {
	ID      string `json:"id" doc:"The agent's id; the agent's name, and AGENT@N for its version N, name it too."`
	Object  string `json:"object" enum:"model"`
	Created int64  `json:"created" doc:"When the agent was created, in Unix seconds."`
	OwnedBy string `json:"owned_by" doc:"The workspace the agent belongs to."`
	// Name and Description are agentplane's additions, for pickers that show more than ids.
	Name        string `json:"name"`
	Description string `json:"description"`
}

// OpenAIModelList is the answer of GET /openai/models.
type OpenAIModelList struct {
	Object string        `json:"object" enum:"list"`
	Data   []OpenAIModel `json:"data"`
}

// OpenAIUsage is a run's token usage in OpenAI's names.
type OpenAIUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func openAIUsageOf(u domain.TokenUsage) OpenAIUsage {
	return OpenAIUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
}

// OpenAIChatMessage is the assistant message of a completion.
type OpenAIChatMessage struct {
	Role    string  `json:"role" enum:"assistant"`
	Content string  `json:"content"`
	Refusal *string `json:"refusal"`
}

// OpenAIChoice is the one choice of a completion.
type OpenAIChoice struct {
	Index        int               `json:"index"`
	Message      OpenAIChatMessage `json:"message"`
	FinishReason string            `json:"finish_reason" enum:"stop"`
	Logprobs     *struct{}         `json:"logprobs"`
}

// OpenAIChatCompletion is the answer of POST /openai/chat/completions without stream.
type OpenAIChatCompletion struct {
	ID          string         `json:"id" doc:"chatcmpl- and the execution's id."`
	Object      string         `json:"object" enum:"chat.completion"`
	Created     int64          `json:"created"`
	Model       string         `json:"model" doc:"The model as the request named it."`
	Choices     []OpenAIChoice `json:"choices"`
	Usage       OpenAIUsage    `json:"usage"`
	ExecutionID string         `json:"execution_id" doc:"agentplane's addition: the execution that answered (GET /api/v1/executions/{id})."`
}

// openAIChunkDelta is the delta of a streamed choice.
type openAIChunkDelta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

type openAIChunkChoice struct {
	Index        int              `json:"index"`
	Delta        openAIChunkDelta `json:"delta"`
	FinishReason *string          `json:"finish_reason"`
}

// openAIChunk is one chat.completion.chunk of a stream.
type openAIChunk struct {
	ID      string              `json:"id"`
	Object  string              `json:"object"`
	Created int64               `json:"created"`
	Model   string              `json:"model"`
	Choices []openAIChunkChoice `json:"choices"`
	// Usage is null on every chunk but the last when include_usage is set, absent otherwise.
	Usage any `json:"usage,omitempty"`
}

// OpenAIErrorBody is the error shape of the OpenAI-compatible routes.
type OpenAIErrorBody struct {
	Error OpenAIError `json:"error"`
}

// OpenAIError is what went wrong, in OpenAI's names; code is agentplane's error code.
type OpenAIError struct {
	Message     string  `json:"message"`
	Type        string  `json:"type" doc:"invalid_request_error, authentication_error, permission_error, not_found_error, conflict_error, rate_limit_error or server_error."`
	Code        string  `json:"code" doc:"agentplane's error code (validation_error, not_found, …); approval_required when a run waits for approval."`
	Param       *string `json:"param"`
	ExecutionID string  `json:"execution_id,omitempty" doc:"The execution concerned, when there is one (approve it at POST /api/v1/executions/{id}/approve)."`
}

// openAIErrorType is OpenAI's error type for an HTTP status.
func openAIErrorType(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden, http.StatusPaymentRequired:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusConflict:
		return "conflict_error"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	}
	if status >= 500 {
		return "server_error"
	}
	return "invalid_request_error"
}

// openAIErrorOf is err in OpenAI's shape.
func openAIErrorOf(ae *Error) OpenAIErrorBody {
	e := OpenAIError{Message: ae.Message, Type: openAIErrorType(ae.Status), Code: ae.Code, ExecutionID: ae.ExecutionID}
	if field, _, ok := strings.Cut(ae.Message, ": "); ok && ae.Status == http.StatusUnprocessableEntity && !strings.Contains(field, " ") {
		e.Param = &field // a FieldError names the field first
	}
	return OpenAIErrorBody{Error: e}
}

// writeOpenAIError answers an error of an OpenAI-compatible route in OpenAI's shape, with
// the status the rest of the API gives it.
// writeError calls it for every request under openAIBase.
func (s *Server) writeOpenAIError(w http.ResponseWriter, r *http.Request, err error) {
	ae := s.toAPIError(r, err)
	for k, vs := range ae.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if ae.Status == http.StatusTooManyRequests && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, ae.Status, openAIErrorOf(ae))
}
