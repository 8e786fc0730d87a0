package simulated

import (
	"bytes"
	"cmp"
	"context"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/llm"
)

// Model is the built-in model: it needs no network or key and answers
// deterministically from the conversation itself, so the emulator and a fresh server
// behave like a real agent platform. The same Request always yields the same Response
// and the same events, in every process; Model and Temperature do not change the answer.
//
// What it does with a request:
//   - Tools set and no tool result since the last user message: one or two "thinking"
//     events explaining the plan, then StopReason "tool_calls" with one (sometimes two)
//     calls to the tools whose name and description share most words with the user's
//     message, with arguments generated from each tool's InputSchema.
//   - Otherwise a 2–5 sentence reply that quotes the user's key phrase, names the role
//     the system prompt gives, recalls the previous user turn and summarises any tool
//     results ("The web_search lookup returned 3 results, …"), preceded by a "thinking"
//     event when there are tool results. With OutputSchema set the reply is instead one
//     JSON value generated from the schema; only its basic keywords are honoured (see
//     schema.go), so constraints such as pattern or minimum fail validation on purpose.
//   - Content streams as word-sized "content" events that concatenate to
//     Response.Content; MaxTokens cuts it (StopReason "length"); Options (see With) add a
//     delay before every event and can fail the call after a few words.
//
// A Model is safe for concurrent use; its zero value is ready too.
type Model struct{}

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
func (m *Model) With(o Options) llm.Provider { return tuned{o} }

// tuned is a Model with Options.
type tuned struct{ o Options }

func (t tuned) Complete(ctx context.Context, req llm.Request, emit func(llm.Event) error) (*llm.Response, error) {
	if status, ok := t.o.FailModels[req.Model]; ok {
		msg := cmp.Or(t.o.FailMessage, "simulated failure of model "+req.Model)
		return nil, &llm.Error{Provider: "simulated", Status: status, Message: msg}
	}
	return run(ctx, &req, t.o, emit)
}

// FailureError is the error a call with Options.Fail ends with; its text is exactly the
// configured message.
type FailureError struct{ Message string }

// Error returns the configured failure message.
func (e *FailureError) Error() string { return e.Message }

// Complete answers req as the Model type describes, with no Options. Errors are
// ctx.Err() when the context ends, or the error emit returned; the Response is nil with
// any error.
func (m *Model) Complete(ctx context.Context, req llm.Request, emit func(llm.Event) error) (*llm.Response, error) {
	return run(ctx, &req, Options{}, emit)
}

// run answers req with o; with o.Fail the error is a *FailureError.
func run(ctx context.Context, req *llm.Request, o Options, emit func(llm.Event) error) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := analyze(req.Messages)
	st := &stream{ctx: ctx, delay: time.Duration(max(o.LatencyMS, 0)) * time.Millisecond, emit: emit, opts: o}
	// The prompt's size (llm.PromptTokens), at least 1 for a conversation.
	resp := &llm.Response{Usage: llm.Usage{PromptTokens: llm.PromptTokens(req)}}
	if resp.Usage.PromptTokens == 0 && len(req.Messages) > 0 {
		resp.Usage.PromptTokens = 1
	}
	if len(req.Tools) > 0 && c.toolCount == 0 {
		return callTools(&c, req, st, resp)
	}
	return answer(&c, req, st, resp)
}

// callTools plans and returns tool calls.
func callTools(c *convo, req *llm.Request, st *stream, resp *llm.Response) (*llm.Response, error) {
	chosen := chooseTools(c, req.Tools)
	think := c.choose(saltPlan, planFirstNoTopic, req.Tools[chosen[0]].Name)
	if topic := c.topic(); topic != "" {
		think = c.choose(saltPlan, planFirst, req.Tools[chosen[0]].Name, topic)
	}
	if err := st.send(llm.EventThinking, think); err != nil {
		return nil, err
	}
	if st.opts.Fail {
		return nil, st.failure()
	}
	think = ""
	switch {
	case len(chosen) == 2:
		think = c.choose(saltPlan2, planSecondTool, req.Tools[chosen[1]].Name)
	case c.pick(saltPlan2, 2) == 0:
		think = c.choose(saltPlan2+1, planSecondWait)
	}
	if think != "" {
		if err := st.send(llm.EventThinking, think); err != nil {
			return nil, err
		}
	}

	// Each call's arguments, as many as MaxTokens allows.
	for k, i := range chosen {
		args := newGen(c, req.Tools[i].InputSchema, true).root()
		tokens := llm.CountTokens(string(args))
		if req.MaxTokens > 0 && resp.Usage.CompletionTokens+tokens > req.MaxTokens {
			break
		}
		resp.Usage.CompletionTokens += tokens
		id := "call_" + hex8(mix(c.h^saltCallID<<8+uint64(k)))
		resp.ToolCalls = append(resp.ToolCalls, llm.ToolCall{ID: id, Name: req.Tools[i].Name, Arguments: args})
	}
	resp.StopReason = llm.StopToolCalls
	if len(resp.ToolCalls) == 0 {
		resp.StopReason = llm.StopLength
	}
	return resp, nil
}

// answer writes the final answer, prose or JSON, and streams it word by word.
func answer(c *convo, req *llm.Request, st *stream, resp *llm.Response) (*llm.Response, error) {
	if c.toolCount > 0 {
		names := c.toolName(c.toolMsgs[0])
		if c.toolCount > 1 && c.toolName(c.toolMsgs[1]) != names {
			names += " and " + c.toolName(c.toolMsgs[1])
		}
		if err := st.send(llm.EventThinking, c.choose(saltAfter, afterTools, names)); err != nil {
			return nil, err
		}
	}

	var content []byte
	if len(bytes.TrimSpace(req.OutputSchema)) > 0 {
		content = newGen(c, req.OutputSchema, false).root()
	} else {
		content = []byte(strings.Join(c.reply(), " "))
	}

	// Stream word by word, up to MaxTokens or the forced failure.
	failAfter := -1
	if st.opts.Fail {
		failAfter = 3 + c.pick(saltFail, 3)
	}
	units, i := 0, 0
	for chunks := 0; i < len(content); chunks++ {
		if chunks == failAfter {
			return nil, st.failure()
		}
		end, u := llm.NextChunk(string(content), i)
		if req.MaxTokens > 0 && llm.WordTokens(units+u) > req.MaxTokens {
			resp.StopReason = llm.StopLength
			break
		}
		if err := st.send(llm.EventContent, string(content[i:end])); err != nil {
			return nil, err
		}
		units, i = units+u, end
	}
	if failAfter >= 0 {
		return nil, st.failure()
	}
	resp.StopReason = cmp.Or(resp.StopReason, llm.StopEnd)
	resp.Content = string(content[:i])
	resp.Usage.CompletionTokens = llm.WordTokens(units)
	return resp, nil
}

// stream paces and delivers events, honouring latency and cancellation.
type stream struct {
	ctx   context.Context
	delay time.Duration
	emit  func(llm.Event) error
	opts  Options
}

// send waits out the simulated latency (or returns ctx.Err() if the context ends
// first) and emits one event.
func (st *stream) send(kind, text string) error {
	if st.delay > 0 {
		t := time.NewTimer(st.delay)
		defer t.Stop()
		select {
		case <-st.ctx.Done():
		case <-t.C:
		}
	}
	if err := st.ctx.Err(); err != nil {
		return err
	}
	if st.emit == nil {
		return nil
	}
	return st.emit(llm.Event{Kind: kind, Text: text})
}

// failure returns the error a call with Options.Fail ends with.
func (st *stream) failure() error {
	return &FailureError{Message: cmp.Or(st.opts.FailMessage, "simulated model failure")}
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
	better := func(a, b rank) bool { return a.score > b.score || a.score == b.score && a.tie > b.tie }
	best, second := rank{i: -1}, rank{i: -1}
	for i, t := range tools {
		r := rank{i, score(nameParts(t.Name), 3) + score(words(t.Description), 1), mix(c.h ^ hashString(t.Name))}
		switch {
		case best.i < 0 || better(r, best):
			best, second = r, best
		case second.i < 0 || better(r, second):
			second = r
		}
	}
	if second.i >= 0 && (second.score > 0 && c.pick(saltTwoCalls, 2) == 0 || c.pick(saltTwoCalls+1, 6) == 0) {
		return []int{best.i, second.i}
	}
	return []int{best.i}
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

// stem is a crude stem of w, lower-cased (ASCII only), so that "files", "file" and
// "searching", "search" match: a plural s and -ing/-ed are dropped, the rest cut to 6 bytes.
func stem(w string) string {
	s := asciiLower(w[:min(len(w), 16)])
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

// asciiLower lower-cases the ASCII letters of s only.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if isUpper(c) {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// words returns the words of s (see nextWord).
func words(s string) []string {
	var ws []string
	for _, w := range wordSpans(s) {
		ws = append(ws, w.text(s))
	}
	return ws
}

// contentWords returns the words of s that are not stopwords.
func contentWords(s string) []string {
	var ws []string
	for _, w := range words(s) {
		if !isStopword(w) {
			ws = append(ws, w)
		}
	}
	return ws
}
