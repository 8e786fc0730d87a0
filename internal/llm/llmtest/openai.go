package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// NewOpenAI starts a fake OpenAI Chat Completions server. It serves POST
// <any prefix>/chat/completions as a stream and GET <any prefix>/models from s.Models,
// and, like the real service, answers 401 when the "Authorization: Bearer <key>" header
// is missing or its key starts with "bad", and 400 to a request that is not a streamed chat
// completion.
//
// A streamed Reply becomes chat.completion.chunk events: a first chunk with only the role,
// one chunk per Reasoning delta (in delta.reasoning_content, or delta.reasoning when the
// request's model contains "openrouter"), one per Text delta (delta.content), one per
// Image (OpenRouter's delta.images: a data: URL of type image_url), for each
// ToolCall one chunk with its index, ID and Name and then one per Args piece
// (function.arguments), a chunk with the finish_reason (StopReason, default "stop", or
// "tool_calls" with ToolCalls), then, when Usage is set and the request asked for it with
// stream_options.include_usage, a chunk with empty choices and usage (prompt_tokens =
// Prompt, completion_tokens = Completion, prompt_tokens_details.cached_tokens = Cached,
// completion_tokens_details.reasoning_tokens = Reasoning), and "data: [DONE]". Delay and
// CutAfter pace and cut these chunks (the role chunk counts).
//
// An error Reply is {"error": {"message", "type", "param": null, "code"}} with Status and
// Header; a 401 without ErrorMessage echoes the received key masked as OpenAI does
// ("Incorrect API key provided: sk-proj-****…1234."). The models endpoint answers the
// queued Reply instead of the list when it is an error Reply.
func NewOpenAI() *Server {
	var seq atomic.Int64
	return newServer(func(s *Server, w http.ResponseWriter, r *http.Request, req Request) {
		key, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
		if !ok || strings.TrimSpace(key) == "" {
			openaiError(w, &Reply{Status: http.StatusUnauthorized, ErrorMessage: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."}, key)
			return
		}
		if strings.HasPrefix(key, "bad") {
			openaiError(w, &Reply{Status: http.StatusUnauthorized}, key) // echoes the key masked, as OpenAI does
			return
		}
		switch {
		case strings.HasSuffix(req.Path, "/models") && r.Method == http.MethodGet:
			if reply, ok := s.popError(); ok {
				openaiError(w, &reply, key)
				return
			}
			openaiModels(w, s.Models)
		case strings.HasSuffix(req.Path, "/chat/completions") && r.Method == http.MethodPost:
			if msg := openaiInvalid(req.Body); msg != "" {
				openaiError(w, &Reply{Status: http.StatusBadRequest, ErrorMessage: msg}, key)
				return
			}
			reply := s.next(req)
			if reply.Status != 0 && reply.Status != http.StatusOK {
				openaiError(w, &reply, key)
				return
			}
			openaiStream(s, w, r, &reply, req.Body, "chatcmpl-fake"+strconv.FormatInt(seq.Add(1), 10))
		default:
			openaiError(w, &Reply{Status: http.StatusNotFound, ErrorMessage: "Invalid URL (" + r.Method + " " + req.Path + ")"}, key)
		}
	})
}

// popError removes and returns the first queued reply if it is an error answer.
func (s *Server) popError() (Reply, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.replies) == 0 || s.replies[0].Status == 0 || s.replies[0].Status == http.StatusOK {
		return Reply{}, false
	}
	r := s.replies[0]
	s.replies = s.replies[1:]
	return r, true
}

// openaiInvalid returns the message OpenAI answers 400 with when body lacks what a
// streamed chat completion needs, "" when it is acceptable.
func openaiInvalid(body map[string]any) string {
	if body == nil {
		return "We could not parse the JSON body of your request."
	}
	if m, _ := body["model"].(string); m == "" {
		return "you must provide a model parameter"
	}
	if msgs, _ := body["messages"].([]any); len(msgs) == 0 {
		return "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead."
	}
	if stream, _ := body["stream"].(bool); !stream {
		return "llmtest: the fake only serves streamed completions (stream: true)"
	}
	return ""
}

// The chunk types render exactly the fields the real wire sends, with a cheap
// json.Marshal per chunk.
type (
	oaChunk struct {
		ID      string     `json:"id"`
		Object  string     `json:"object"`
		Created int64      `json:"created"`
		Model   string     `json:"model"`
		Choices []oaChoice `json:"choices"`
		Usage   *oaUsage   `json:"usage,omitempty"`
	}
	oaChoice struct {
		Index        int     `json:"index"`
		Delta        oaDelta `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	}
	oaDelta struct {
		Role             string       `json:"role,omitempty"`
		Content          string       `json:"content,omitempty"`
		ReasoningContent string       `json:"reasoning_content,omitempty"`
		Reasoning        string       `json:"reasoning,omitempty"`
		ToolCalls        []oaToolCall `json:"tool_calls,omitempty"`
		Images           []oaImage    `json:"images,omitempty"`
	}
	oaImage struct {
		Type     string `json:"type"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	oaToolCall struct {
		Index    int        `json:"index"`
		ID       string     `json:"id,omitempty"`
		Type     string     `json:"type,omitempty"`
		Function oaFunction `json:"function"`
	}
	oaFunction struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	}
	oaUsage struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		TotalTokens         int `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
		CompletionTokensDetails struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	}
)

// openaiStream renders a streamed reply as the doc of NewOpenAI describes.
func openaiStream(s *Server, w http.ResponseWriter, r *http.Request, reply *Reply, body map[string]any, id string) {
	model, _ := body["model"].(string)
	openrouter := strings.Contains(model, "openrouter")
	startStream(w, reply, "text/event-stream; charset=utf-8")
	c := chunks{s: s, w: w, r: r, reply: reply}
	chunk := oaChunk{ID: id, Object: "chat.completion.chunk", Created: time.Now().Unix(), Model: model}
	send := func(d oaDelta, finish *string) bool {
		chunk.Choices = []oaChoice{{Delta: d, FinishReason: finish}}
		return c.send(sseData(&chunk))
	}
	if !send(oaDelta{Role: "assistant"}, nil) {
		return
	}
	for _, t := range reply.Reasoning {
		d := oaDelta{ReasoningContent: t}
		if openrouter {
			d = oaDelta{Reasoning: t}
		}
		if !send(d, nil) {
			return
		}
	}
	for _, t := range reply.Text {
		if !send(oaDelta{Content: t}, nil) {
			return
		}
	}
	for _, im := range reply.Images {
		img := oaImage{Type: "image_url"}
		img.ImageURL.URL = "data:" + im.MimeType + ";base64," + base64.StdEncoding.EncodeToString(im.Data)
		if !send(oaDelta{Images: []oaImage{img}}, nil) {
			return
		}
	}
	for i, tc := range reply.ToolCalls {
		first := oaToolCall{Index: i, ID: tc.ID, Type: "function", Function: oaFunction{Name: tc.Name}}
		if !send(oaDelta{ToolCalls: []oaToolCall{first}}, nil) {
			return
		}
		for _, a := range tc.Args {
			if !send(oaDelta{ToolCalls: []oaToolCall{{Index: i, Function: oaFunction{Arguments: a}}}}, nil) {
				return
			}
		}
	}
	finish := reply.StopReason
	if finish == "" {
		finish = "stop"
		if len(reply.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	if !send(oaDelta{}, &finish) {
		return
	}
	if u := reply.Usage; u != nil && openaiWantsUsage(body) {
		usage := oaUsage{PromptTokens: u.Prompt, CompletionTokens: u.Completion, TotalTokens: u.Prompt + u.Completion}
		usage.PromptTokensDetails.CachedTokens = u.Cached
		usage.CompletionTokensDetails.ReasoningTokens = u.Reasoning
		chunk.Choices, chunk.Usage = []oaChoice{}, &usage
		if !c.send(sseData(&chunk)) {
			return
		}
	}
	c.send([]byte("data: [DONE]\n\n"))
}

// openaiWantsUsage reports whether the request set stream_options.include_usage, without
// which OpenAI sends no usage chunk.
func openaiWantsUsage(body map[string]any) bool {
	opts, _ := body["stream_options"].(map[string]any)
	want, _ := opts["include_usage"].(bool)
	return want
}

// openaiError writes reply as OpenAI's error JSON; key is the one the request carried.
func openaiError(w http.ResponseWriter, reply *Reply, key string) {
	msg, typ, code := reply.ErrorMessage, "invalid_request_error", any(nil)
	switch reply.Status {
	case http.StatusUnauthorized:
		if msg == "" {
			msg, code = "Incorrect API key provided: "+maskKey(key)+". You can find your API key at https://platform.openai.com/account/api-keys.", "invalid_api_key"
		}
	case http.StatusTooManyRequests:
		typ, code = "requests", "rate_limit_exceeded"
	case http.StatusNotFound:
		code = "unknown_url"
	default:
		if reply.Status >= 500 {
			typ = "server_error"
		}
	}
	if msg == "" {
		msg = http.StatusText(reply.Status)
	}
	writeError(w, reply, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}})
}

// maskKey masks a key the way OpenAI's 401 echoes it: the "sk-proj-" (or first three
// characters), stars, and the last four.
func maskKey(key string) string {
	if len(key) <= 8 {
		return strings.Repeat("*", len(key))
	}
	head := key[:3]
	if strings.HasPrefix(key, "sk-proj-") {
		head = "sk-proj-"
	}
	stars := max(4, len(key)-len(head)-4)
	return head + strings.Repeat("*", stars) + key[len(key)-4:]
}

// openaiModels writes the model list in OpenAI's shape.
func openaiModels(w http.ResponseWriter, models []string) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: make([]model, 0, len(models))}
	for _, id := range models {
		list.Data = append(list.Data, model{ID: id, Object: "model", Created: 1700000000, OwnedBy: "llmtest"})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(list)
}
