package simulated

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/llm"
)

// Model is the built-in model: it needs no network or key and answers deterministically
// from the conversation itself (the same Request gives the same Response and events in
// every process; Model and Temperature change nothing), so the emulator and a fresh
// server behave like a real agent platform. With Tools and no tool result since the last
// user message it explains its plan in one or two "thinking" events and calls the one or
// two tools whose name and description share most words with the user's message, with
// arguments generated from their InputSchema. Otherwise it replies in 2–5 sentences that
// quote the user's key phrase, name the system prompt's role, recall the previous turn and
// summarise tool results ("The web_search lookup returned 3 results, …"), or, with
// OutputSchema, in one JSON value generated from the schema (see schema.go). Content
// streams as word-sized "content" events; MaxTokens cuts it (StopReason "length"), and
// Options (see With) add latency or a failure. It is safe for concurrent use; its zero
// value is ready too.
type Model struct{ o Options }

var _ llm.Provider = (*Model)(nil)

// New returns a simulated model.
func New() *Model { return &Model{} }

// Options tune the simulated model for one agent version (its config.simulation): a delay
// before every streamed event, and a forced failure after some partial output.
type Options struct {
	LatencyMS   int
	Fail        bool
	FailMessage string
	// FailModels fails every call to a model it names at once, before anything streams,
	// with an *llm.Error of that HTTP status (a 503, say, as a provider that is down).
	FailModels map[string]int
}

// With returns the model answering with o.
func (m *Model) With(o Options) llm.Provider { return &Model{o} }

// Complete answers req as the Model type describes. Errors are ctx.Err() when the context
// ends, the error emit returned, an *llm.Error for Options.FailModels or, for Options.Fail,
// one whose text is exactly the configured message; the Response is nil with any error.
func (m *Model) Complete(ctx context.Context, req llm.Request, emit func(llm.Event) error) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if status, ok := m.o.FailModels[req.Model]; ok {
		msg := cmp.Or(m.o.FailMessage, "simulated failure of model "+req.Model)
		return nil, &llm.Error{Provider: "simulated", Status: status, Message: msg}
	}

	// The prompt's size (llm.PromptTokens), at least 1 for a conversation.
	prompt := max(llm.PromptTokens(&req), min(len(req.Messages), 1))
	k := &call{analyze(req.Messages), ctx, &req, m.o, emit, &llm.Response{Usage: llm.Usage{PromptTokens: prompt}}}
	if len(req.Tools) > 0 && k.toolCount == 0 {
		return k.callTools()
	}
	return k.answer()
}

// call is one answer in the making.
type call struct {
	convo
	ctx  context.Context
	req  *llm.Request
	o    Options
	emit func(llm.Event) error
	resp *llm.Response
}

// callTools explains its plan in one or two thoughts and returns tool calls.
func (k *call) callTools() (*llm.Response, error) {
	tools, chosen := k.req.Tools, chooseTools(&k.convo, k.req.Tools)
	thoughts := []string{k.choose(saltPlan, planFirstNoTopic, tools[chosen[0]].Name)}
	if k.topic != "" {
		thoughts[0] = k.choose(saltPlan, planFirst, tools[chosen[0]].Name, k.topic)
	}
	switch {
	case len(chosen) == 2:
		thoughts = append(thoughts, k.choose(saltPlan2, planSecondTool, tools[chosen[1]].Name))
	case k.pick(saltPlan2, 2) == 0:
		thoughts = append(thoughts, k.choose(saltPlan2+1, planSecondWait))
	}
	for n, t := range thoughts {
		if err := k.send(llm.EventThinking, t); err != nil {
			return nil, err
		}
		if n == 0 && k.o.Fail {
			return nil, k.failure()
		}
	}

	// Each call's arguments, as many as MaxTokens allows.
	resp := k.resp
	for n, i := range chosen {
		args := newGen(k.convo, tools[i].InputSchema, true).root()
		tokens := llm.CountTokens(string(args))
		if k.req.MaxTokens > 0 && resp.Usage.CompletionTokens+tokens > k.req.MaxTokens {
			break
		}
		resp.Usage.CompletionTokens += tokens
		id := "call_" + hex8(mix(k.h^saltCallID<<8+uint64(n)))
		resp.ToolCalls = append(resp.ToolCalls, llm.ToolCall{ID: id, Name: tools[i].Name, Arguments: args})
	}
	resp.StopReason = llm.StopToolCalls
	if len(resp.ToolCalls) == 0 {
		resp.StopReason = llm.StopLength
	}
	return resp, nil
}

// answer writes the final answer, prose or JSON, and streams it word by word.
func (k *call) answer() (*llm.Response, error) {
	if k.toolCount > 0 {
		names := k.toolName(k.toolMsgs[0])
		if second := k.toolName(k.toolMsgs[1]); k.toolCount > 1 && second != names {
			names += " and " + second
		}
		if err := k.send(llm.EventThinking, k.choose(saltAfter, afterTools, names)); err != nil {
			return nil, err
		}
	}
	var content string
	if len(bytes.TrimSpace(k.req.OutputSchema)) > 0 {
		content = string(newGen(k.convo, k.req.OutputSchema, false).root())
	} else {
		content = strings.Join(k.reply(), " ")
	}

	// Stream word by word, up to MaxTokens or the forced failure.
	resp, words, i := k.resp, 0, 0
	for chunks := 0; i < len(content); chunks++ {
		if k.o.Fail && chunks == 3+k.pick(saltFail, 3) {
			return nil, k.failure()
		}
		end, n := llm.NextChunk(content, i)
		if k.req.MaxTokens > 0 && llm.WordTokens(words+n) > k.req.MaxTokens {
			resp.StopReason = llm.StopLength
			break
		}
		if err := k.send(llm.EventContent, content[i:end]); err != nil {
			return nil, err
		}
		words, i = words+n, end
	}
	if k.o.Fail {
		return nil, k.failure()
	}
	resp.StopReason = cmp.Or(resp.StopReason, llm.StopEnd)
	resp.Content = content[:i]
	resp.Usage.CompletionTokens = llm.WordTokens(words)
	return resp, nil
}

// send waits out the simulated latency (or returns ctx.Err() if the context ends
// first) and emits one event.
func (k *call) send(kind, text string) error {
	if k.o.LatencyMS > 0 {
		select { // an unstopped timer is collected once unreferenced (Go 1.23)
		case <-k.ctx.Done():
		case <-time.After(time.Duration(k.o.LatencyMS) * time.Millisecond):
		}
	}
	if err := k.ctx.Err(); err != nil || k.emit == nil {
		return err
	}
	return k.emit(llm.Event{Kind: kind, Text: text})
}

// failure returns the error a call with Options.Fail ends with.
func (k *call) failure() error {
	return errors.New(cmp.Or(k.o.FailMessage, "simulated model failure")) // not an *llm.Error, so never retried
}

// chooseTools picks the tools most relevant to the user's message: a word shared with
// a tool's name scores 3 and one shared with its description 1; ties go by hash. It
// picks a second tool sometimes, more often when that one is relevant too.
func chooseTools(c *convo, tools []llm.ToolSpec) []int {
	// The stems of the user's first 64 words that are not stopwords.
	user := map[string]bool{}
	cw := contentWords(c.user)
	for _, w := range cw[:min(len(cw), 64)] {
		user[stem(w)] = true
	}
	score := func(words []string, points int) (n int) {
		for _, w := range words {
			if !isStopword(w) && user[stem(w)] {
				n += points
			}
		}
		return n
	}

	// Rank the tools by the words their names and descriptions share with the user's.
	type rank struct {
		i, score int
		tie      uint64
	}
	ranks := make([]rank, len(tools))
	for i, t := range tools {
		ranks[i] = rank{i, score(nameParts(t.Name), 3) + score(contentWords(t.Description), 1), mix(c.h ^ hashString(t.Name))}
	}
	slices.SortStableFunc(ranks, func(a, b rank) int { return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(b.tie, a.tie)) })
	if len(ranks) > 1 && (ranks[1].score > 0 && c.pick(saltTwoCalls, 2) == 0 || c.pick(saltTwoCalls+1, 6) == 0) {
		return []int{ranks[0].i, ranks[1].i}
	}
	return []int{ranks[0].i}
}

// nameParts splits a tool name at punctuation and at lower-to-upper case changes
// ("web_search", "getWeather", "github.create_issue").
func nameParts(name string) []string {
	var parts []string
	start := -1
	for i := 0; i <= len(name); i++ {
		boundary := i == len(name) || !(isLower(name[i]) || isUpper(name[i]) || name[i] >= '0' && name[i] <= '9' || name[i] >= 0x80)
		if (boundary || i > 0 && isUpper(name[i]) && isLower(name[i-1])) && start >= 0 {
			parts, start = append(parts, name[start:i]), -1
		}
		if !boundary && start < 0 {
			start = i
		}
	}
	return parts
}

// stem is a crude stem of w, lower-cased, so that "files", "file" and
// "searching", "search" match: a plural s and -ing/-ed are dropped, the rest cut to 6 bytes.
func stem(w string) string {
	s := strings.ToLower(w[:min(len(w), 16)])
	if len(s) > 3 && s[len(s)-1] == 's' && s[len(s)-2] != 's' {
		s = s[:len(s)-1]
	}
	switch {
	case len(s) > 5 && strings.HasSuffix(s, "ing"):
		s = s[:len(s)-3]
	case len(s) > 4 && strings.HasSuffix(s, "ed"):
		s = s[:len(s)-2]
	}
	return s[:min(len(s), 6)]
}

// contentWords returns the words of s that are not stopwords.
func contentWords(s string) []string {
	var out []string
	for _, w := range wordSpans(nil, s, -1) {
		if !isStopword(w.text(s)) {
			out = append(out, w.text(s))
		}
	}
	return out
}
