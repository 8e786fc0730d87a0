package gemini

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/genai"

	"github.com/agentplane/agentplane/internal/llm"
)

// stream assembles a Response from the chunks of one streamed answer, emitting text
// and reasoning as each chunk arrives.
type stream struct {
	content  strings.Builder
	thinking strings.Builder
	thought  bool   // a reasoning part arrived (even an empty one with a signature)
	thinkSig []byte // the reasoning block's signature, if a thought part carried one
	calls    []llm.ToolCall
	media    []llm.Media
	usage    *genai.GenerateContentResponseUsageMetadata
	reason   genai.FinishReason
}

// add takes in one chunk: parts in order (reasoning, text, function calls), the latest
// usage (each chunk's is a running total) and the finish reason. A blocked prompt ends
// the call at once.
func (st *stream) add(chunk *genai.GenerateContentResponse, emit func(llm.Event) error) error {
	if chunk == nil {
		return nil
	}
	if fb := chunk.PromptFeedback; fb != nil && fb.BlockReason != "" && fb.BlockReason != genai.BlockedReasonUnspecified {
		return fmt.Errorf("gemini blocked the prompt: %s", fb.BlockReason)
	}
	if chunk.UsageMetadata != nil {
		st.usage = chunk.UsageMetadata
	}
	if len(chunk.Candidates) == 0 || chunk.Candidates[0] == nil {
		return nil
	}
	cand := chunk.Candidates[0]
	if cand.Content != nil {
		for _, part := range cand.Content.Parts {
			if err := st.part(part, emit); err != nil {
				return err
			}
		}
	}
	if cand.FinishReason != "" && cand.FinishReason != genai.FinishReasonUnspecified {
		st.reason = cand.FinishReason
	}
	return nil
}

// part takes in one part. Gemini sends each function call whole, its args an object.
func (st *stream) part(part *genai.Part, emit func(llm.Event) error) error {
	switch {
	case part == nil:
		return nil
	case part.FunctionCall != nil:
		fc := part.FunctionCall
		args := []byte("{}")
		if len(fc.Args) > 0 {
			var err error
			if args, err = json.Marshal(fc.Args); err != nil {
				return fmt.Errorf("gemini: the arguments of tool call %q: %w", fc.Name, err)
			}
		}
		tc := llm.ToolCall{ID: fc.ID, Name: fc.Name, Arguments: args}
		if len(part.ThoughtSignature) > 0 {
			tc.Signature = base64.StdEncoding.EncodeToString(part.ThoughtSignature)
		}
		st.calls = append(st.calls, tc)
	case part.InlineData != nil && !part.Thought:
		// An image (or other media) the model generated: bytes and their media type.
		m := llm.Media{MimeType: part.InlineData.MIMEType, Data: part.InlineData.Data}
		st.media = append(st.media, m)
		return emit(llm.Event{Kind: llm.EventMedia, Media: &m})
	case part.Thought:
		st.thought = true
		if len(part.ThoughtSignature) > 0 {
			st.thinkSig = part.ThoughtSignature
		}
		if part.Text != "" {
			st.thinking.WriteString(part.Text)
			return emit(llm.Event{Kind: llm.EventThinking, Text: part.Text})
		}
	case part.Text != "":
		// A signature on a text part (Gemini 3 puts one on the last part of an answer
		// without calls) is optional to send back and has no place in llm.Response.
		st.content.WriteString(part.Text)
		return emit(llm.Event{Kind: llm.EventContent, Text: part.Text})
	}
	return nil
}

// finish returns the Response once the stream has ended: an error for a stream without
// a finish reason (cut short) or one that ended for any reason but STOP or MAX_TOKENS.
func (st *stream) finish(ctx context.Context, ep llm.Endpoint) (*llm.Response, error) {
	resp := &llm.Response{Content: st.content.String(), Media: st.media}
	switch st.reason {
	case "":
		return nil, llm.TransportError(ctx, ep, llm.ErrIncomplete)
	case genai.FinishReasonStop:
		resp.StopReason = llm.StopEnd
		if len(st.calls) > 0 {
			resp.StopReason = llm.StopToolCalls
			resp.ToolCalls = st.calls
			nameCalls(resp.ToolCalls)
		}
	case genai.FinishReasonMaxTokens:
		resp.StopReason = llm.StopLength
	default:
		// SAFETY, RECITATION, MALFORMED_FUNCTION_CALL …: the same request would most
		// likely end the same way, so this is no *llm.Error and is not retried.
		return nil, fmt.Errorf("gemini stopped the answer: %s", st.reason)
	}
	if st.thought {
		th := llm.Thinking{Text: st.thinking.String()}
		if len(st.thinkSig) > 0 {
			th.Signature = base64.StdEncoding.EncodeToString(st.thinkSig)
		}
		resp.Thinking = []llm.Thinking{th}
	}
	if u := st.usage; u != nil {
		resp.Usage = llm.Usage{
			PromptTokens:     int(u.PromptTokenCount) + int(u.ToolUsePromptTokenCount),
			CachedTokens:     int(u.CachedContentTokenCount),
			CompletionTokens: int(u.CandidatesTokenCount) + int(u.ThoughtsTokenCount),
			ReasoningTokens:  int(u.ThoughtsTokenCount),
		}
	}
	return resp, nil
}

// nameCalls gives each call without an id (the Gemini API often sends none) one of the
// form "call_<n>" that no other call of the answer has, so results can be matched.
func nameCalls(calls []llm.ToolCall) {
	used := make(map[string]bool, len(calls))
	for _, tc := range calls {
		used[tc.ID] = true
	}
	n := 0
	for i := range calls {
		if calls[i].ID != "" {
			continue
		}
		for {
			n++
			id := "call_" + strconv.Itoa(n)
			if !used[id] {
				calls[i].ID = id
				used[id] = true
				break
			}
		}
	}
}
