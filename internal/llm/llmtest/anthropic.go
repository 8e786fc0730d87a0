package llmtest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// NewAnthropic starts a fake Anthropic Messages API (POST /v1/messages, GET /v1/models).
// A streamed Reply is rendered as named SSE events, one chunk each (what CutAfter counts):
// message_start (usage.input_tokens = Usage.Prompt-Usage.Cached, cache_read_input_tokens =
// Usage.Cached, output_tokens 1), ping, then a thinking block at index 0 when Reasoning or
// Signature is set (a thinking_delta per Reasoning element, then a signature_delta with
// Signature), a text block (a text_delta per Text element), a tool_use block per ToolCall
// (id, name; an input_json_delta per Args element), each as content_block_start, deltas,
// content_block_stop; then message_delta (stop_reason: StopReason, else "tool_use" with
// ToolCalls or "end_turn"; usage.output_tokens = Usage.Completion, and
// output_tokens_details.thinking_tokens = Usage.Reasoning when set) and message_stop. With
// Usage nil every count is 0, as a server that reports none. Any other Status answers
// {"type":"error","error":{"type","message":ErrorMessage}} with the error type Anthropic
// uses for that status, and Header. Like the real API it answers 400 without an
// anthropic-version header, 401 authentication_error without an x-api-key or with one
// starting with "bad", and 400 for a body without model, max_tokens, messages or
// "stream": true; these checks take no scripted Reply.
func NewAnthropic() *Server {
	return newServer(serveAnthropic)
}

// serveAnthropic checks a request as the real API would, then answers it.
func serveAnthropic(s *Server, w http.ResponseWriter, r *http.Request, req Request) {
	if r.Header.Get("anthropic-version") == "" {
		anthropicError(w, http.StatusBadRequest, "anthropic-version: header is required")
		return
	}
	if key := r.Header.Get("x-api-key"); key == "" || strings.HasPrefix(key, "bad") {
		anthropicError(w, http.StatusUnauthorized, "invalid x-api-key")
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		anthropicModels(s, w)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		if msg := checkAnthropicBody(req.Body); msg != "" {
			anthropicError(w, http.StatusBadRequest, msg)
			return
		}
		reply := s.next(req)
		if reply.Status != 0 && reply.Status != http.StatusOK {
			writeError(w, &reply, anthropicErrorBody(reply.Status, reply.ErrorMessage))
			return
		}
		model, _ := req.Body["model"].(string)
		streamAnthropic(s, w, r, &reply, model)
	default:
		anthropicError(w, http.StatusNotFound, "Not found")
	}
}

// checkAnthropicBody returns what the real API would say of a body missing a required
// field, or "" when it has them all.
func checkAnthropicBody(body map[string]any) string {
	if body == nil {
		return "the request body is not JSON"
	}
	if m, _ := body["model"].(string); m == "" {
		return "model: Field required"
	}
	if _, ok := body["max_tokens"].(float64); !ok {
		return "max_tokens: Field required"
	}
	if msgs, _ := body["messages"].([]any); len(msgs) == 0 {
		return "messages: Field required"
	}
	if stream, _ := body["stream"].(bool); !stream {
		return "llmtest: only streamed calls are scripted"
	}
	return ""
}

// anthropicErr is the body of every Anthropic error answer.
type anthropicErr struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// anthropicErrorBody is Anthropic's error JSON for status.
func anthropicErrorBody(status int, message string) anthropicErr {
	e := anthropicErr{Type: "error"}
	e.Error.Message = message
	switch status {
	case http.StatusBadRequest:
		e.Error.Type = "invalid_request_error"
	case http.StatusUnauthorized:
		e.Error.Type = "authentication_error"
	case http.StatusPaymentRequired:
		e.Error.Type = "billing_error"
	case http.StatusForbidden:
		e.Error.Type = "permission_error"
	case http.StatusNotFound:
		e.Error.Type = "not_found_error"
	case http.StatusRequestEntityTooLarge:
		e.Error.Type = "request_too_large"
	case http.StatusTooManyRequests:
		e.Error.Type = "rate_limit_error"
	case http.StatusGatewayTimeout:
		e.Error.Type = "timeout_error"
	case 529:
		e.Error.Type = "overloaded_error"
	default:
		e.Error.Type = "api_error"
	}
	return e
}

// anthropicError answers a request the fake itself rejects.
func anthropicError(w http.ResponseWriter, status int, message string) {
	writeError(w, &Reply{Status: status}, anthropicErrorBody(status, message))
}

// anthropicModel is one entry of GET /v1/models.
type anthropicModel struct {
	Type        string `json:"type"`
	ID          string `json:"id"`
	DisplayName string `json:"display_name"`
	CreatedAt   string `json:"created_at"`
}

// anthropicModels answers GET /v1/models with s.Models, in one page.
func anthropicModels(s *Server, w http.ResponseWriter) {
	s.mu.Lock()
	ids := append([]string(nil), s.Models...)
	s.mu.Unlock()
	page := struct {
		Data    []anthropicModel `json:"data"`
		HasMore bool             `json:"has_more"`
		FirstID *string          `json:"first_id"`
		LastID  *string          `json:"last_id"`
	}{Data: make([]anthropicModel, 0, len(ids))}
	for _, id := range ids {
		page.Data = append(page.Data, anthropicModel{Type: "model", ID: id, DisplayName: id, CreatedAt: "2025-01-01T00:00:00Z"})
	}
	if len(ids) > 0 {
		page.FirstID, page.LastID = &ids[0], &ids[len(ids)-1]
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(page)
}

// The events of a Messages stream, as the real API shapes them.
type (
	anthropicUsage struct {
		InputTokens   int                     `json:"input_tokens"`
		OutputTokens  int                     `json:"output_tokens"`
		CacheCreation int                     `json:"cache_creation_input_tokens"`
		CacheRead     int                     `json:"cache_read_input_tokens"`
		OutputDetails *anthropicOutputDetails `json:"output_tokens_details,omitempty"`
	}
	anthropicOutputDetails struct {
		ThinkingTokens int `json:"thinking_tokens"`
	}
	anthropicMessage struct {
		ID         string         `json:"id"`
		Type       string         `json:"type"`
		Role       string         `json:"role"`
		Model      string         `json:"model"`
		Content    []struct{}     `json:"content"`
		StopReason *string        `json:"stop_reason"`
		StopSeq    *string        `json:"stop_sequence"`
		Usage      anthropicUsage `json:"usage"`
	}
	anthropicStart struct {
		Type    string           `json:"type"`
		Message anthropicMessage `json:"message"`
	}
	anthropicBlockStart struct {
		Type         string `json:"type"`
		Index        int    `json:"index"`
		ContentBlock any    `json:"content_block"`
	}
	anthropicBlockDelta struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
		Delta any    `json:"delta"`
	}
	anthropicIndexed struct { // content_block_stop
		Type  string `json:"type"`
		Index int    `json:"index"`
	}
	anthropicTyped struct { // ping, message_stop
		Type string `json:"type"`
	}
	anthropicMessageDelta struct {
		Type  string `json:"type"`
		Delta struct {
			StopReason string  `json:"stop_reason"`
			StopSeq    *string `json:"stop_sequence"`
		} `json:"delta"`
		Usage anthropicUsage `json:"usage"`
	}
	anthropicText struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	anthropicThinking struct {
		Type     string `json:"type"`
		Thinking string `json:"thinking"`
	}
	anthropicSignature struct {
		Type      string `json:"type"`
		Signature string `json:"signature"`
	}
	anthropicJSON struct {
		Type        string `json:"type"`
		PartialJSON string `json:"partial_json"`
	}
	anthropicToolUse struct {
		Type  string   `json:"type"`
		ID    string   `json:"id"`
		Name  string   `json:"name"`
		Input struct{} `json:"input"`
	}
)

// streamAnthropic renders a scripted reply as a Messages event stream.
func streamAnthropic(s *Server, w http.ResponseWriter, r *http.Request, reply *Reply, model string) {
	startStream(w, reply, "text/event-stream")
	c := &chunks{s: s, w: w, r: r, reply: reply}
	start := anthropicStart{Type: "message_start", Message: anthropicMessage{
		ID: "msg_llmtest", Type: "message", Role: "assistant", Model: model, Content: []struct{}{},
	}}
	end := anthropicMessageDelta{Type: "message_delta"}
	if u := reply.Usage; u != nil {
		start.Message.Usage = anthropicUsage{InputTokens: u.Prompt - u.Cached, CacheRead: u.Cached, OutputTokens: 1}
		end.Usage.OutputTokens = u.Completion
		if u.Reasoning > 0 {
			end.Usage.OutputDetails = &anthropicOutputDetails{ThinkingTokens: u.Reasoning}
		}
	}
	if !c.send(sseEvent("message_start", start)) || !c.send(sseEvent("ping", anthropicTyped{Type: "ping"})) {
		return
	}
	index := 0
	// block sends one content block: its start, its deltas and its stop.
	block := func(content any, deltas []any) bool {
		if !c.send(sseEvent("content_block_start", anthropicBlockStart{Type: "content_block_start", Index: index, ContentBlock: content})) {
			return false
		}
		for _, d := range deltas {
			if !c.send(sseEvent("content_block_delta", anthropicBlockDelta{Type: "content_block_delta", Index: index, Delta: d})) {
				return false
			}
		}
		ok := c.send(sseEvent("content_block_stop", anthropicIndexed{Type: "content_block_stop", Index: index}))
		index++
		return ok
	}
	if len(reply.Reasoning) > 0 || reply.Signature != "" {
		deltas := make([]any, 0, len(reply.Reasoning)+1)
		for _, t := range reply.Reasoning {
			deltas = append(deltas, anthropicThinking{Type: "thinking_delta", Thinking: t})
		}
		if reply.Signature != "" {
			deltas = append(deltas, anthropicSignature{Type: "signature_delta", Signature: reply.Signature})
		}
		if !block(anthropicThinking{Type: "thinking"}, deltas) {
			return
		}
	}
	if len(reply.Text) > 0 {
		deltas := make([]any, 0, len(reply.Text))
		for _, t := range reply.Text {
			deltas = append(deltas, anthropicText{Type: "text_delta", Text: t})
		}
		if !block(anthropicText{Type: "text"}, deltas) {
			return
		}
	}
	for i, tc := range reply.ToolCalls {
		id := tc.ID
		if id == "" {
			id = "toolu_llmtest_" + strconv.Itoa(i)
		}
		deltas := make([]any, 0, len(tc.Args))
		for _, a := range tc.Args {
			deltas = append(deltas, anthropicJSON{Type: "input_json_delta", PartialJSON: a})
		}
		if !block(anthropicToolUse{Type: "tool_use", ID: id, Name: tc.Name}, deltas) {
			return
		}
	}
	end.Delta.StopReason = reply.StopReason
	if end.Delta.StopReason == "" {
		end.Delta.StopReason = "end_turn"
		if len(reply.ToolCalls) > 0 {
			end.Delta.StopReason = "tool_use"
		}
	}
	if c.send(sseEvent("message_delta", end)) {
		c.send(sseEvent("message_stop", anthropicTyped{Type: "message_stop"}))
	}
}
