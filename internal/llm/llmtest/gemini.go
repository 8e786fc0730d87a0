package llmtest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// NewGemini starts a fake of Google's Gemini API (generativelanguage.googleapis.com):
// POST /v1beta/models/{model}:streamGenerateContent?alt=sse and GET /v1beta/models.
//
// A streamed Reply becomes one SSE "data:" GenerateContentResponse per chunk: each
// Reasoning delta a {"text", "thought": true} part (Signature, base64, rides as
// thoughtSignature on the last of them), each Text delta a {"text"} part, each Image an
// {"inlineData": {"mimeType", "data"}} part (data base64), each ToolCall
// one {"functionCall": {"id", "name", "args"}, "thoughtSignature"} part whose args object
// is the concatenation of Args (no id when ID is empty). A last chunk carries the
// finishReason (StopReason, default "STOP", also for tool calls as Gemini does) and, when
// Usage is set, usageMetadata: promptTokenCount = Prompt, cachedContentTokenCount =
// Cached, candidatesTokenCount = Completion - Reasoning, thoughtsTokenCount = Reasoning.
// That chunk is the wire's end marker: a stream cut before it has no finishReason.
// An error Reply is {"error": {"code", "message", "status"}} with Status and Header.
// A request without an API key (x-goog-api-key header or key query parameter) gets
// the real API's 403 PERMISSION_DENIED "Method doesn't allow unregistered callers …"; a
// key starting with "bad" gets its 400 INVALID_ARGUMENT "API key not valid" with reason
// API_KEY_INVALID.
func NewGemini() *Server {
	return newServer(serveGemini)
}

// geminiNoKeyMessage is the real API's answer to a request without any API key.
const geminiNoKeyMessage = "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."

// geminiStatus names the google.rpc status the real API reports with each HTTP code.
var geminiStatus = map[int]string{
	http.StatusBadRequest:          "INVALID_ARGUMENT",
	http.StatusUnauthorized:        "UNAUTHENTICATED",
	http.StatusForbidden:           "PERMISSION_DENIED",
	http.StatusNotFound:            "NOT_FOUND",
	http.StatusTooManyRequests:     "RESOURCE_EXHAUSTED",
	http.StatusInternalServerError: "INTERNAL",
	http.StatusServiceUnavailable:  "UNAVAILABLE",
	http.StatusGatewayTimeout:      "DEADLINE_EXCEEDED",
}

// The wire types below are the subset of GenerateContentResponse the fake renders;
// structs keep json.Marshal cheap per chunk.
type (
	geminiChunk struct {
		Candidates    []geminiCandidate `json:"candidates"`
		UsageMetadata *geminiUsage      `json:"usageMetadata,omitempty"`
		ModelVersion  string            `json:"modelVersion"`
	}
	geminiCandidate struct {
		Content      *geminiContent `json:"content,omitempty"`
		FinishReason string         `json:"finishReason,omitempty"`
		Index        int            `json:"index"`
	}
	geminiContent struct {
		Role  string       `json:"role"`
		Parts []geminiPart `json:"parts"`
	}
	geminiPart struct {
		Text             string              `json:"text,omitempty"`
		Thought          bool                `json:"thought,omitempty"`
		FunctionCall     *geminiFunctionCall `json:"functionCall,omitempty"`
		InlineData       *geminiBlob         `json:"inlineData,omitempty"`
		ThoughtSignature string              `json:"thoughtSignature,omitempty"`
	}
	geminiBlob struct {
		MimeType string `json:"mimeType"`
		Data     []byte `json:"data"` // base64 on the wire, as encoding/json writes []byte
	}
	geminiFunctionCall struct {
		ID   string          `json:"id,omitempty"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	}
	geminiUsage struct {
		PromptTokenCount        int `json:"promptTokenCount"`
		CachedContentTokenCount int `json:"cachedContentTokenCount,omitempty"`
		CandidatesTokenCount    int `json:"candidatesTokenCount"`
		ThoughtsTokenCount      int `json:"thoughtsTokenCount,omitempty"`
		TotalTokenCount         int `json:"totalTokenCount"`
	}
)

// serveGemini routes one request of the Gemini fake.
func serveGemini(s *Server, w http.ResponseWriter, r *http.Request, req Request) {
	key := r.Header.Get("X-Goog-Api-Key")
	if key == "" {
		key = r.URL.Query().Get("key")
	}
	if key == "" {
		geminiError(w, &Reply{Status: http.StatusForbidden, ErrorMessage: geminiNoKeyMessage})
		return
	}
	if strings.HasPrefix(key, "bad") {
		// The real API's answer to an invalid key: 400 with an ErrorInfo detail.
		writeError(w, &Reply{Status: http.StatusBadRequest}, map[string]any{"error": map[string]any{
			"code": http.StatusBadRequest, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT",
			"details": []any{map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"}}}})
		return
	}
	switch {
	case r.Method == http.MethodGet && req.Path == "/v1beta/models":
		serveGeminiModels(s, w)
	case r.Method == http.MethodPost && strings.HasPrefix(req.Path, "/v1beta/models/") &&
		strings.HasSuffix(req.Path, ":streamGenerateContent"):
		model := strings.TrimSuffix(strings.TrimPrefix(req.Path, "/v1beta/models/"), ":streamGenerateContent")
		if r.URL.Query().Get("alt") != "sse" {
			// Without alt=sse the real API streams one JSON array, which no client here reads.
			geminiError(w, &Reply{Status: http.StatusBadRequest, ErrorMessage: "llmtest: streamGenerateContent without alt=sse"})
			return
		}
		if contents, _ := req.Body["contents"].([]any); len(contents) == 0 {
			geminiError(w, &Reply{Status: http.StatusBadRequest, ErrorMessage: "* GenerateContentRequest.contents: contents is not specified"})
			return
		}
		reply := s.next(req)
		if reply.Status != 0 && reply.Status != http.StatusOK {
			geminiError(w, &reply)
			return
		}
		streamGemini(s, w, r, &reply, model)
	default:
		geminiError(w, &Reply{Status: http.StatusNotFound, ErrorMessage: "llmtest: no Gemini endpoint " + r.Method + " " + req.Path})
	}
}

// serveGeminiModels answers the model listing with s.Models, in one page.
func serveGeminiModels(s *Server, w http.ResponseWriter) {
	type model struct {
		Name                       string   `json:"name"`
		DisplayName                string   `json:"displayName"`
		SupportedGenerationMethods []string `json:"supportedGenerationMethods"`
	}
	s.mu.Lock()
	out := struct {
		Models []model `json:"models"`
	}{Models: make([]model, 0, len(s.Models))}
	for _, id := range s.Models {
		out.Models = append(out.Models, model{Name: "models/" + id, DisplayName: id, SupportedGenerationMethods: []string{"generateContent", "countTokens"}})
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// geminiError writes reply as the API's error JSON.
func geminiError(w http.ResponseWriter, reply *Reply) {
	status := geminiStatus[reply.Status]
	if status == "" {
		status = "UNKNOWN"
	}
	msg := reply.ErrorMessage
	if msg == "" {
		msg = http.StatusText(reply.Status)
	}
	writeError(w, reply, map[string]any{"error": map[string]any{"code": reply.Status, "message": msg, "status": status}})
}

// streamGemini renders a streamed reply chunk by chunk.
func streamGemini(s *Server, w http.ResponseWriter, r *http.Request, reply *Reply, model string) {
	// Checked before the stream starts: an invalid script must fail loudly, not as a
	// malformed frame that looks like a client bug.
	calls := make([]json.RawMessage, len(reply.ToolCalls))
	for i, tc := range reply.ToolCalls {
		args := strings.Join(tc.Args, "")
		if args == "" {
			args = "{}"
		}
		if !json.Valid([]byte(args)) {
			geminiError(w, &Reply{Status: http.StatusInternalServerError, ErrorMessage: "llmtest: the Args of tool call " + tc.Name + " are not valid JSON"})
			return
		}
		calls[i] = json.RawMessage(args)
	}
	startStream(w, reply, "text/event-stream")
	c := chunks{s: s, w: w, r: r, reply: reply}
	send := func(p geminiPart) bool {
		return c.send(sseData(geminiChunk{
			Candidates:   []geminiCandidate{{Content: &geminiContent{Role: "model", Parts: []geminiPart{p}}}},
			ModelVersion: model,
		}))
	}
	for i, d := range reply.Reasoning {
		p := geminiPart{Text: d, Thought: true}
		if i == len(reply.Reasoning)-1 {
			p.ThoughtSignature = reply.Signature
		}
		if !send(p) {
			return
		}
	}
	for _, d := range reply.Text {
		if !send(geminiPart{Text: d}) {
			return
		}
	}
	for _, im := range reply.Images {
		if !send(geminiPart{InlineData: &geminiBlob{MimeType: im.MimeType, Data: im.Data}}) {
			return
		}
	}
	for i, tc := range reply.ToolCalls {
		p := geminiPart{FunctionCall: &geminiFunctionCall{ID: tc.ID, Name: tc.Name, Args: calls[i]}, ThoughtSignature: tc.Signature}
		if !send(p) {
			return
		}
	}
	last := geminiChunk{Candidates: []geminiCandidate{{FinishReason: reply.StopReason}}, ModelVersion: model}
	if last.Candidates[0].FinishReason == "" {
		last.Candidates[0].FinishReason = "STOP"
	}
	if u := reply.Usage; u != nil {
		last.UsageMetadata = &geminiUsage{
			PromptTokenCount:        u.Prompt,
			CachedContentTokenCount: u.Cached,
			CandidatesTokenCount:    u.Completion - u.Reasoning,
			ThoughtsTokenCount:      u.Reasoning,
			TotalTokenCount:         u.Prompt + u.Completion,
		}
	}
	c.send(sseData(last))
}
