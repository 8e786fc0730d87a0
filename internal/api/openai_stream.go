package api

import (
	"encoding/json"
	"net/http"

	"github.com/agentplane/agentplane/internal/domain"
)

// sseData is one `data: <JSON>` line of an OpenAI stream and its blank line.
func sseData(v any) []byte {
	b, _ := json.Marshal(v)
	return append(append([]byte("data: "), b...), '\n', '\n')
}

// contentOf is the text of a `content` frame; "" for another frame.
func contentOf(ev domain.Event) string {
	var d StreamEventContent
	if ev.Event != "content" || json.Unmarshal(ev.Data, &d) != nil {
		return ""
	}
	return d.Content
}

// doneFrame is what the OpenAI-compatible streams read of a `done` frame.
type doneFrame struct {
	Output     json.RawMessage   `json:"output"`
	TokenUsage domain.TokenUsage `json:"token_usage"`
}

func doneOf(ev domain.Event) doneFrame {
	var d doneFrame
	_ = json.Unmarshal(ev.Data, &d)
	return d
}

// streamTranslator turns an execution's frames into another protocol's stream.
type streamTranslator interface {
	// frame is what to send for a frame of the execution; nil for nothing.
	frame(domain.Event) []byte
	// fail is what ends the stream with an error that is no frame (an approval wait).
	fail(OpenAIErrorBody) []byte
}

// streamErrorOf is a terminal `error` frame of an execution in OpenAI's error shape.
func streamErrorOf(id string, data json.RawMessage) OpenAIErrorBody {
	var e StreamEventError
	_ = json.Unmarshal(data, &e)
	code := e.Code
	if code == "" {
		code = "failed"
	}
	status := http.StatusBadGateway
	if code == "unauthorized" {
		status = http.StatusUnauthorized
	}
	return openAIErrorOf(&Error{Status: status, Code: code, Message: "execution " + id + ": " + e.Message, ExecutionID: id})
}

// chatChunker turns an execution's frames into chat.completion.chunk lines: a first chunk
// with the assistant role, one per content delta, a last one with finish_reason, the usage
// chunk when asked for, and [DONE]. A run's error ends the stream with OpenAI's error object.
type chatChunker struct {
	id, model string
	created   int64
	usage     bool // stream_options.include_usage
	started   bool // the role chunk is out
	streamed  bool // some content was sent as deltas
}

func (c *chatChunker) chunk(delta openAIChunkDelta, finish *string) []byte {
	ch := openAIChunk{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.model,
		Choices: []openAIChunkChoice{{Delta: delta, FinishReason: finish}}}
	if c.usage {
		ch.Usage = json.RawMessage("null") // every chunk but the last
	}
	return sseData(ch)
}

// delta is a content chunk, preceded by the role chunk when it is the first.
func (c *chatChunker) delta(text string) []byte {
	var out []byte
	if !c.started {
		c.started = true
		empty := ""
		out = c.chunk(openAIChunkDelta{Role: "assistant", Content: &empty}, nil)
	}
	return append(out, c.chunk(openAIChunkDelta{Content: &text}, nil)...)
}

func (c *chatChunker) frame(ev domain.Event) []byte {
	switch ev.Event {
	case "content":
		text := contentOf(ev)
		if text == "" {
			return nil
		}
		c.streamed = true
		return c.delta(text)
	case "done":
		d := doneOf(ev)
		var out []byte
		if !c.streamed {
			// Nothing was streamed (a structured output, a step agent): the output in one piece.
			out = c.delta(outputText(d.Output))
		}
		stop := "stop"
		out = append(out, c.chunk(openAIChunkDelta{}, &stop)...)
		if c.usage {
			u := openAIUsageOf(d.TokenUsage)
			out = append(out, sseData(openAIChunk{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.model,
				Choices: []openAIChunkChoice{}, Usage: &u})...)
		}
		return append(out, "data: [DONE]\n\n"...)
	case "error":
		return c.fail(streamErrorOf(c.id[len("chatcmpl-"):], ev.Data))
	}
	return nil
}

// fail is a data line with OpenAI's error object, which OpenAI SDKs raise; no [DONE] follows.
func (c *chatChunker) fail(e OpenAIErrorBody) []byte { return sseData(e) }
