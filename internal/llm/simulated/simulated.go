package simulated

import (
	"bytes"
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
func (m *Model) With(o Options) llm.Provider { return tuned{m: m, o: o} }

// tuned is a Model with Options.
type tuned struct {
	m *Model
	o Options
}

func (t tuned) Complete(ctx context.Context, req llm.Request, emit func(llm.Event) error) (*llm.Response, error) {
	if status, ok := t.o.FailModels[req.Model]; ok {
		msg := t.o.FailMessage
		if msg == "" {
			msg = "simulated failure of model " + req.Model
		}
		return nil, &llm.Error{Provider: "simulated", Status: status, Message: msg}
	}
	return t.m.complete(ctx, &req, t.o, emit)
}

// FailureError is the error a call with Options.Fail ends with; its text is exactly the
// configured message.
type FailureError struct {
	Message string
}

// Error returns the configured failure message.
func (e *FailureError) Error() string { return e.Message }

// Complete answers req as the Model type describes, with no Options. Errors are
// ctx.Err() when the context ends, or the error emit returned; the Response is nil with
// any error.
func (s *Model) Complete(ctx context.Context, req llm.Request, emit func(llm.Event) error) (*llm.Response, error) {
	return s.complete(ctx, &req, Options{}, emit)
}

// complete answers req with o; with o.Fail the error is a *FailureError.
func (s *Model) complete(ctx context.Context, req *llm.Request, o Options, emit func(llm.Event) error) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := analyze(req.Messages)
	st := stream{ctx: ctx, delay: time.Duration(max(o.LatencyMS, 0)) * time.Millisecond, emit: emit, opts: o}
	resp := &llm.Response{Usage: llm.Usage{PromptTokens: promptTokens(req)}}
	if len(req.Tools) > 0 && c.toolCount == 0 {
		return s.callTools(&c, req, &st, resp)
	}
	return s.answer(&c, req, &st, resp)
}

// failure returns the error a call with Options.Fail ends with.
func (st *stream) failure() error {
	msg := st.opts.FailMessage
	if msg == "" {
		msg = "simulated model failure"
	}
	return &FailureError{Message: msg}
}

// callTools plans and returns tool calls.
func (s *Model) callTools(c *convo, req *llm.Request, st *stream, resp *llm.Response) (*llm.Response, error) {
	chosen, n := chooseTools(c, req.Tools)
	topic := c.topic()
	var tb [256]byte
	var think []byte
	if topic != "" {
		think = appendTmpl(tb[:0], planFirst[c.pick(saltPlan, len(planFirst))], req.Tools[chosen[0]].Name, topic)
	} else {
		think = appendTmpl(tb[:0], planFirstNoTopic[c.pick(saltPlan, len(planFirstNoTopic))], req.Tools[chosen[0]].Name)
	}
	if err := st.send(llm.EventThinking, string(think)); err != nil {
		return nil, err
	}
	if st.opts.Fail {
		return nil, st.failure()
	}
	switch {
	case n == 2:
		think = appendTmpl(tb[:0], planSecondTool[c.pick(saltPlan2, len(planSecondTool))], req.Tools[chosen[1]].Name)
	case c.pick(saltPlan2, 2) == 0:
		think = append(tb[:0], planSecondWait[c.pick(saltPlan2+1, len(planSecondWait))]...)
	default:
		think = nil
	}
	if think != nil {
		if err := st.send(llm.EventThinking, string(think)); err != nil {
			return nil, err
		}
	}

	resp.ToolCalls = make([]llm.ToolCall, 0, n)
	for k := 0; k < n; k++ {
		spec := &req.Tools[chosen[k]]
		args := newGen(c, spec.InputSchema, true).root()
		tokens := llm.CountTokens(string(args))
		if req.MaxTokens > 0 && resp.Usage.CompletionTokens+tokens > req.MaxTokens {
			break
		}
		resp.Usage.CompletionTokens += tokens
		id := make([]byte, 0, 13)
		id = appendHex(append(id, "call_"...), mix(c.h^saltCallID<<8+uint64(k)), 8)
		resp.ToolCalls = append(resp.ToolCalls, llm.ToolCall{ID: string(id), Name: spec.Name, Arguments: args})
	}
	if len(resp.ToolCalls) == 0 {
		resp.ToolCalls = nil
		resp.StopReason = llm.StopLength
		return resp, nil
	}
	resp.StopReason = llm.StopToolCalls
	return resp, nil
}

// answer writes the final answer, prose or JSON, and streams it word by word.
func (s *Model) answer(c *convo, req *llm.Request, st *stream, resp *llm.Response) (*llm.Response, error) {
	if c.toolCount > 0 {
		var tb [256]byte
		names := append(tb[:0], c.toolName(c.toolMsgs[0])...)
		if c.toolCount > 1 {
			if second := c.toolName(c.toolMsgs[1]); second != c.toolName(c.toolMsgs[0]) {
				names = append(append(names, " and "...), second...)
			}
		}
		think := appendTmpl(names[len(names):], afterTools[c.pick(saltAfter, len(afterTools))], string(names))
		if err := st.send(llm.EventThinking, string(think)); err != nil {
			return nil, err
		}
	}

	var content string
	if len(bytes.TrimSpace(req.OutputSchema)) > 0 {
		content = string(newGen(c, req.OutputSchema, false).root())
	} else {
		var ends [maxSentences]int
		b, _ := c.appendReply(make([]byte, 0, 512), ends[:])
		content = string(b)
	}

	failAfter := -1
	if st.opts.Fail {
		failAfter = 3 + c.pick(saltFail, 3)
	}
	units, chunks, i := 0, 0, 0
	for i < len(content) {
		if chunks == failAfter {
			return nil, st.failure()
		}
		end, u := llm.NextChunk(content, i)
		if req.MaxTokens > 0 && llm.WordTokens(units+u) > req.MaxTokens {
			resp.StopReason = llm.StopLength
			break
		}
		if err := st.send(llm.EventContent, content[i:end]); err != nil {
			return nil, err
		}
		units += u
		chunks++
		i = end
	}
	if failAfter >= 0 {
		return nil, st.failure()
	}
	if resp.StopReason == "" {
		resp.StopReason = llm.StopEnd
	}
	resp.Content = content[:i]
	resp.Usage.CompletionTokens = llm.WordTokens(units)
	return resp, nil
}

// promptTokens estimates the prompt's size (llm.PromptTokens), at least 1 for a
// conversation.
func promptTokens(req *llm.Request) int {
	total := llm.PromptTokens(req)
	if total == 0 && len(req.Messages) > 0 {
		total = 1
	}
	return total
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

// maxStems bounds how many of the user's words tool selection compares.
const maxStems = 64

// chooseTools picks the tools most relevant to the user's message: a word shared with
// a tool's name scores 3 and one shared with its description 1; ties go by hash. It
// picks a second tool sometimes, more often when that one is relevant too.
func chooseTools(c *convo, tools []llm.ToolSpec) (chosen [2]int, n int) {
	// The stems of the user's first maxStems words that are not stopwords.
	user := map[string]bool{}
	for i, ns := 0, 0; ns < maxStems; ns++ {
		w, ok := nextWord(c.user, i)
		for ok && isStopword(w.text(c.user)) {
			w, ok = nextWord(c.user, w.end)
		}
		if !ok {
			break
		}
		i = w.end
		user[stem(w.text(c.user))] = true
	}
	has := func(word string) bool { return !isStopword(word) && user[stem(word)] }

	// Rank the tools by the words their names and descriptions share with the user's.
	type rank struct {
		i     int
		score int
		tie   uint64
	}
	better := func(a, b rank) bool { return a.score > b.score || a.score == b.score && a.tie > b.tie }
	best, second := rank{i: -1}, rank{i: -1}
	for i := range tools {
		r := rank{i: i, tie: mix(c.h ^ hashString(tools[i].Name))}
		forNameParts(tools[i].Name, func(part string) {
			if has(part) {
				r.score += 3
			}
		})
		desc := tools[i].Description
		for j := 0; ; {
			w, ok := nextWord(desc, j)
			if !ok {
				break
			}
			j = w.end
			if has(w.text(desc)) {
				r.score++
			}
		}
		switch {
		case best.i < 0 || better(r, best):
			best, second = r, best
		case second.i < 0 || better(r, second):
			second = r
		}
	}
	chosen[0], n = best.i, 1
	if second.i >= 0 && (second.score > 0 && c.pick(saltTwoCalls, 2) == 0 || c.pick(saltTwoCalls+1, 6) == 0) {
		chosen[1], n = second.i, 2
	}
	return chosen, n
}

// forNameParts calls f with each part of a tool name split at punctuation and at
// lower-to-upper case changes ("web_search", "getWeather", "github.create_issue").
func forNameParts(name string, f func(string)) {
	start := -1
	for i := 0; i <= len(name); i++ {
		boundary := i == len(name) || !(isLower(name[i]) || isUpper(name[i]) || name[i] >= '0' && name[i] <= '9' || name[i] >= 0x80)
		camel := !boundary && i > 0 && isUpper(name[i]) && isLower(name[i-1])
		if (boundary || camel) && start >= 0 {
			f(name[start:i])
			start = -1
		}
		if !boundary && start < 0 {
			start = i
		}
	}
}

// stem is a crude stem of w, lower-cased (ASCII only), so that "files", "file" and
// "searching", "search" match: a plural s and -ing/-ed are dropped, the rest cut to 6 bytes.
func stem(w string) string {
	lower := []byte(w[:min(len(w), 16)])
	for i, c := range lower {
		if isUpper(c) {
			lower[i] = c + 'a' - 'A'
		}
	}
	s := string(lower)
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
