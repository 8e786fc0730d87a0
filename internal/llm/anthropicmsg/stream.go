package anthropicmsg

import (
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/agentplane/agentplane/internal/llm"
)

// Content block kinds the decoder tells apart; any other kind (server tools, their
// results) is carried along and ignored.
const (
	blockText     = "text"
	blockThinking = "thinking"
	blockRedacted = "redacted_thinking"
	blockToolUse  = "tool_use"
	blockOutput   = "output" // a tool_use of the structured-output tool
)

// block is one content block of the streamed message, as far as it has arrived.
type block struct {
	kind      string
	id, name  string
	text      strings.Builder // thinking text, or a tool call's JSON arguments
	signature string
	data      string // a redacted_thinking block's data
}

// decoder folds the events of one stream into a Response, emitting deltas as they come.
type decoder struct {
	structured bool
	emit       func(llm.Event) error

	blocks  []*block         // in the order they started
	byIndex map[int64]*block // by the index the events name them with
	text    strings.Builder  // the text blocks' content
	output  strings.Builder  // the structured answer (the output tool's input)

	input, cacheRead, cacheCreation, outputTokens, thinkingTokens int64
	stopReason                                                    anthropic.StopReason
	stopped                                                       bool // message_stop arrived
}

// newDecoder returns the decoder of one call; structured is whether the call asked for
// structured output, whose answer arrives as the output tool's input.
func newDecoder(structured bool, emit func(llm.Event) error) *decoder {
	return &decoder{structured: structured, emit: emit, byIndex: make(map[int64]*block)}
}

// handle folds one event. It returns emit's error as it is, or an error wrapping
// errMalformed for events that do not fit the stream so far.
func (d *decoder) handle(ev anthropic.MessageStreamEventUnion) error {
	switch ev.Type {
	case "message_start":
		u := &ev.Message.Usage
		d.usage(u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokens, u.OutputTokensDetails.ThinkingTokens)
	case "content_block_start":
		return d.start(ev.Index, &ev.ContentBlock)
	case "content_block_delta":
		b := d.byIndex[ev.Index]
		if b == nil {
			return fmt.Errorf("%w: a delta for content block %d, which never started", errMalformed, ev.Index)
		}
		return d.delta(b, &ev.Delta)
	case "message_delta":
		d.stopReason = ev.Delta.StopReason
		u := &ev.Usage
		d.usage(u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokens, u.OutputTokensDetails.ThinkingTokens)
	case "message_stop":
		d.stopped = true
	}
	return nil
}

// usage takes the larger of what is known and what an event reports: the counts are
// cumulative, and message_delta may omit (zero) the input counts message_start gave.
func (d *decoder) usage(input, cacheRead, cacheCreation, output, thinking int64) {
	d.input = max(d.input, input)
	d.cacheRead = max(d.cacheRead, cacheRead)
	d.cacheCreation = max(d.cacheCreation, cacheCreation)
	d.outputTokens = max(d.outputTokens, output)
	d.thinkingTokens = max(d.thinkingTokens, thinking)
}

// start opens a content block; text a start event already carries is emitted.
func (d *decoder) start(index int64, cb *anthropic.ContentBlockStartEventContentBlockUnion) error {
	b := &block{kind: cb.Type, id: cb.ID, name: cb.Name}
	d.blocks = append(d.blocks, b)
	d.byIndex[index] = b
	switch cb.Type {
	case blockText:
		return d.content(&d.text, cb.Text)
	case blockThinking:
		b.signature = cb.Signature
		return d.thinking(b, cb.Thinking)
	case blockRedacted:
		b.data = cb.Data
	case blockToolUse:
		if d.structured && cb.Name == outputTool {
			b.kind = blockOutput
		}
	}
	return nil
}

// delta adds one delta to its block.
func (d *decoder) delta(b *block, delta *anthropic.MessageStreamEventUnionDelta) error {
	switch delta.Type {
	case "text_delta":
		return d.content(&d.text, delta.Text)
	case "thinking_delta":
		return d.thinking(b, delta.Thinking)
	case "signature_delta":
		b.signature += delta.Signature
	case "input_json_delta":
		if b.kind == blockOutput {
			return d.content(&d.output, delta.PartialJSON)
		}
		b.text.WriteString(delta.PartialJSON)
	}
	return nil
}

// content records and emits a delta of the answer.
func (d *decoder) content(to *strings.Builder, s string) error {
	if s == "" {
		return nil
	}
	to.WriteString(s)
	return d.emit(llm.Event{Kind: llm.EventContent, Text: s})
}

// thinking records and emits a delta of a thinking block.
func (d *decoder) thinking(b *block, s string) error {
	if s == "" {
		return nil
	}
	b.text.WriteString(s)
	return d.emit(llm.Event{Kind: llm.EventThinking, Text: s})
}

// response is the finished message. Tool calls are the answer when there are any (a
// structured answer given alongside them is dropped); a message cut at max_tokens has no
// tool calls, since the last one's arguments are incomplete.
func (d *decoder) response() *llm.Response {
	resp := &llm.Response{StopReason: llm.StopEnd}
	answered := false
	for _, b := range d.blocks {
		switch b.kind {
		case blockThinking:
			resp.Thinking = append(resp.Thinking, llm.Thinking{Text: b.text.String(), Signature: b.signature})
		case blockRedacted:
			resp.Thinking = append(resp.Thinking, llm.Thinking{Redacted: b.data})
		case blockToolUse:
			args := b.text.String()
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			resp.ToolCalls = append(resp.ToolCalls, llm.ToolCall{ID: b.id, Name: b.name, Arguments: []byte(args)})
		case blockOutput:
			answered = true
		}
	}
	resp.Content = d.text.String()
	switch {
	case d.stopReason == anthropic.StopReasonMaxTokens || d.stopReason == anthropic.StopReasonModelContextWindowExceeded:
		resp.StopReason = llm.StopLength
		resp.ToolCalls = nil
		resp.Content += d.output.String()
	case len(resp.ToolCalls) > 0:
		resp.StopReason = llm.StopToolCalls
	case answered:
		resp.Content += d.output.String()
	}
	cached := d.cacheRead + d.cacheCreation
	resp.Usage = llm.Usage{
		PromptTokens:     int(d.input + cached),
		CompletionTokens: int(d.outputTokens),
		CachedTokens:     int(cached),
		ReasoningTokens:  int(d.thinkingTokens),
	}
	return resp
}
