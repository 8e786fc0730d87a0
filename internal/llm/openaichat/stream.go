package openaichat

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/openai/openai-go/v3"

	"github.com/agentplane/agentplane/internal/llm"
)

// reasoningFields are the delta fields compatible servers put reasoning in, in order of
// preference: reasoning_content (DeepSeek, vLLM) and reasoning (OpenRouter, newer vLLM
// and Ollama). The SDK's typed delta has neither, so they are read from its extra fields;
// only the first present is used, as a server may send both with the same text.
var reasoningFields = [...]string{"reasoning_content", "reasoning"}

// accumulator builds the Response of a streamed completion from its chunks.
type accumulator struct {
	content   strings.Builder
	reasoning strings.Builder
	calls     []*toolCall
	finish    string // the last finish_reason seen; "" until the model finished
	usage     llm.Usage
	media     []llm.Media
}

// toolCall is a tool call being assembled from its deltas.
type toolCall struct {
	index    int64
	id, name string
	args     strings.Builder
}

// add folds one chunk into the response, emitting its reasoning and content deltas;
// its only error is emit's. Choices other than the first (n > 1) are never requested.
func (a *accumulator) add(chunk openai.ChatCompletionChunk, emit func(llm.Event) error) error {
	if chunk.JSON.Usage.Valid() {
		u := &chunk.Usage
		a.usage = llm.Usage{
			PromptTokens:     int(u.PromptTokens),
			CompletionTokens: int(u.CompletionTokens),
			CachedTokens:     int(u.PromptTokensDetails.CachedTokens),
			ReasoningTokens:  int(u.CompletionTokensDetails.ReasoningTokens),
		}
	}
	for i := range chunk.Choices {
		c := &chunk.Choices[i]
		if c.Index != 0 {
			continue
		}
		if r := reasoningDelta(&c.Delta); r != "" {
			a.reasoning.WriteString(r)
			if err := emit(llm.Event{Kind: llm.EventThinking, Text: r}); err != nil {
				return err
			}
		}
		// A refusal is what the model wrote instead of the answer: it is the content the
		// caller gets to see.
		for _, text := range [2]string{c.Delta.Content, c.Delta.Refusal} {
			if text == "" {
				continue
			}
			a.content.WriteString(text)
			if err := emit(llm.Event{Kind: llm.EventContent, Text: text}); err != nil {
				return err
			}
		}
		for _, m := range deltaImages(&c.Delta) {
			a.media = append(a.media, m)
			if err := emit(llm.Event{Kind: llm.EventMedia, Media: &m}); err != nil {
				return err
			}
		}
		for j := range c.Delta.ToolCalls {
			a.addToolCall(&c.Delta.ToolCalls[j])
		}
		if c.FinishReason != "" {
			a.finish = c.FinishReason
		}
	}
	return nil
}

// addToolCall folds one tool-call delta in: the first delta of an index carries the id
// and name, the next ones pieces of the arguments. A new id on an index already used
// starts another call, for servers that send every call whole at index 0.
func (a *accumulator) addToolCall(d *openai.ChatCompletionChunkChoiceDeltaToolCall) {
	var tc *toolCall
	for i := len(a.calls) - 1; i >= 0; i-- {
		if a.calls[i].index == d.Index {
			tc = a.calls[i]
			break
		}
	}
	if tc == nil || (d.ID != "" && tc.id != "" && d.ID != tc.id) {
		tc = &toolCall{index: d.Index}
		a.calls = append(a.calls, tc)
	}
	if d.ID != "" {
		tc.id = d.ID
	}
	if d.Function.Name != "" {
		tc.name = d.Function.Name
	}
	tc.args.WriteString(d.Function.Arguments)
}

// reasoningDelta returns the reasoning text of a delta, "" when it has none.
func reasoningDelta(d *openai.ChatCompletionChunkChoiceDelta) string {
	if len(d.JSON.ExtraFields) == 0 {
		return ""
	}
	for _, name := range reasoningFields {
		raw := d.JSON.ExtraFields[name].Raw()
		if raw == "" || raw == "null" {
			continue
		}
		var s string
		if err := json.Unmarshal([]byte(raw), &s); err != nil || s == "" {
			continue
		}
		return s
	}
	return ""
}

// deltaImages returns the images of a delta: OpenRouter (and servers following it) send a
// generated image as delta.images, [{"type": "image_url", "image_url": {"url": "data:…"}}].
// Only data: URLs are taken (the bytes are in the reply); a remote URL is not fetched.
func deltaImages(d *openai.ChatCompletionChunkChoiceDelta) []llm.Media {
	if len(d.JSON.ExtraFields) == 0 {
		return nil
	}
	raw := d.JSON.ExtraFields["images"].Raw()
	if raw == "" || raw == "null" {
		return nil
	}
	var images []struct {
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if json.Unmarshal([]byte(raw), &images) != nil {
		return nil
	}
	var out []llm.Media
	for _, im := range images {
		if m, ok := parseDataURL(im.ImageURL.URL); ok {
			out = append(out, m)
		}
	}
	return out
}

// parseDataURL decodes a base64 data: URL (data:image/png;base64,…).
func parseDataURL(u string) (llm.Media, bool) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return llm.Media{}, false
	}
	meta, payload, ok := strings.Cut(rest, ",")
	if !ok {
		return llm.Media{}, false
	}
	mt, isBase64 := strings.CutSuffix(meta, ";base64")
	if !isBase64 {
		return llm.Media{}, false
	}
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		if data, err = base64.RawStdEncoding.DecodeString(payload); err != nil {
			return llm.Media{}, false
		}
	}
	if mt == "" {
		mt = "application/octet-stream"
	}
	return llm.Media{MimeType: mt, Data: data}, true
}

// response is the completed answer. A turn with tool calls stops for them whatever its
// finish_reason says (Ollama reports "stop"), except when it was cut at the token limit:
// the arguments of the last call are then truncated and cannot be run.
func (a *accumulator) response() *llm.Response {
	resp := &llm.Response{Content: a.content.String(), Usage: a.usage, Media: a.media}
	if a.reasoning.Len() > 0 {
		resp.Thinking = []llm.Thinking{{Text: a.reasoning.String()}}
	}
	switch {
	case a.finish == "length":
		resp.StopReason = llm.StopLength
	case len(a.calls) > 0:
		resp.StopReason = llm.StopToolCalls
		resp.ToolCalls = make([]llm.ToolCall, len(a.calls))
		for i, tc := range a.calls {
			args := strings.TrimSpace(tc.args.String())
			if args == "" {
				args = "{}"
			}
			id := tc.id
			if id == "" { // some local servers omit it; the tool result needs one to refer to
				id = "call_" + strconv.Itoa(i)
			}
			resp.ToolCalls[i] = llm.ToolCall{ID: id, Name: tc.name, Arguments: json.RawMessage(args)}
		}
	default:
		resp.StopReason = llm.StopEnd
	}
	return resp
}
