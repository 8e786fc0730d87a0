// Package llmtest runs fake model providers for tests and benchmarks: httptest servers that
// speak the real wire formats (OpenAI Chat Completions, Anthropic Messages, Gemini) and
// answer from a script of Replies, recording what they were sent.
package llmtest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// Reply is one scripted answer. With Status 0 or 200 it is a streamed answer: Reasoning
// deltas, then Text deltas, then ToolCalls, then Usage (if not nil) and the end marker.
// Any other Status is an error answer carrying ErrorMessage in the provider's error shape.
type Reply struct {
	Status       int
	Header       http.Header // added to the answer, e.g. Retry-After
	ErrorMessage string

	Reasoning []string // reasoning / thinking deltas
	Signature string   // the thinking block's signature (Anthropic)
	Text      []string // content deltas
	// Images are media the reply carries after its text: Gemini inlineData parts, or on the
	// Chat Completions wire OpenRouter's delta.images data: URLs (Anthropic's has none).
	Images    []Image
	ToolCalls []ToolCall
	// Usage is reported in the stream's last chunk; nil reports none.
	Usage *Usage
	// StopReason overrides the wire's finish reason (default: the normal end, or the
	// tool-call reason when there are ToolCalls).
	StopReason string

	// Delay is slept before each chunk; the wait ends early if the client goes away.
	Delay time.Duration
	// CutAfter closes the connection after this many chunks, without the end marker.
	CutAfter int
}

// Image is a scripted piece of media of a reply.
type Image struct {
	MimeType string
	Data     []byte
}

// ToolCall is a scripted tool call; Args are the chunks its JSON arguments arrive in.
type ToolCall struct {
	ID        string
	Name      string
	Args      []string
	Signature string // Gemini's thought signature (base64)
}

// Usage is what a Reply reports, in the wire's own fields: Prompt includes Cached and
// Completion includes Reasoning, except on the wires that report them apart (the
// protocol renderers say how they split them).
type Usage struct {
	Prompt, Completion, Cached, Reasoning int
}

// Request is one request a fake received.
type Request struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   map[string]any // the decoded JSON body; nil for a GET
	Raw    []byte
	// Answered says that the whole reply was written to a client still connected: false
	// while the reply is being made, and for a reply cut (CutAfter) or whose client left.
	Answered bool

	ctx context.Context
}

// Context is the request's context, done when its client leaves (its connection closed) or
// once the reply was written: a Fallback that holds a request can wait on it.
func (r Request) Context() context.Context { return r.ctx }

// Server is a fake provider. Push queues replies; when none is queued, Fallback answers
// (nil Fallback: a 500 saying the script ran out).
type Server struct {
	*httptest.Server
	// Fallback answers requests once the queue is empty; set it before the first request.
	Fallback func(Request) Reply
	// Models is what the model-listing endpoint returns.
	Models []string
	// Discard stops the recording of requests (Requests returns none): a benchmark's
	// thousands of calls would otherwise pile up in memory.
	Discard bool
	// OnSend, when set, is called with each streamed chunk just before it is written and
	// flushed (the time-to-first-token benchmark stamps the first content chunk with it).
	OnSend func(frame []byte)

	mu       sync.Mutex
	replies  []Reply
	requests []Request
	gone     chan time.Time
}

// newServer starts a fake whose handler is h (the wire renderer).
func newServer(h func(s *Server, w http.ResponseWriter, r *http.Request, req Request)) *Server {
	s := &Server{gone: make(chan time.Time, 64), Models: []string{"fake-model"}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), ctx: r.Context()}
		// Read the whole body first: from then on the server notices a client that closes its
		// connection, and cancels the request's context.
		req.Raw, _ = io.ReadAll(r.Body)
		if len(req.Raw) > 0 {
			_ = json.Unmarshal(req.Raw, &req.Body)
		}
		i := -1
		if !s.Discard {
			s.mu.Lock()
			i = len(s.requests)
			s.requests = append(s.requests, req)
			s.mu.Unlock()
		}
		aw := &answerWriter{ResponseWriter: w, ctx: r.Context()}
		h(s, aw, r, req)
		if i >= 0 && !aw.cut && !aw.lost {
			s.mu.Lock()
			s.requests[i].Answered = true
			s.mu.Unlock()
		}
	}))
	return s
}

// answerWriter is the ResponseWriter of a reply, which notes whether the reply reached its
// client: lost when a part of it was written after the client left (or its write failed),
// cut for a connection closed on purpose (CutAfter). A client that leaves once it has read
// the whole reply (its last chunk) was answered.
type answerWriter struct {
	http.ResponseWriter
	ctx       context.Context
	cut, lost bool
}

func (a *answerWriter) WriteHeader(code int) {
	a.check(nil)
	a.ResponseWriter.WriteHeader(code)
}

func (a *answerWriter) Write(p []byte) (int, error) {
	a.check(nil)
	n, err := a.ResponseWriter.Write(p)
	a.check(err)
	return n, err
}

func (a *answerWriter) Flush() {
	a.check(nil)
	if f, ok := a.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// check notes a reply lost: its client left before this part, or writing it failed.
func (a *answerWriter) check(err error) {
	if err != nil || a.ctx.Err() != nil {
		a.lost = true
	}
}

func (a *answerWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	a.cut = true
	return http.NewResponseController(a.ResponseWriter).Hijack()
}

// Push queues replies, answered in order.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	s.replies = append(s.replies, replies...)
	s.mu.Unlock()
}

// Requests returns a copy of the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// ClientGone receives the time at which a client closed its connection while a reply was
// still streaming.
func (s *Server) ClientGone() <-chan time.Time { return s.gone }

// next is the reply to req: the first queued one, else Fallback's.
func (s *Server) next(req Request) Reply {
	s.mu.Lock()
	if len(s.replies) > 0 {
		r := s.replies[0]
		s.replies = s.replies[1:]
		s.mu.Unlock()
		return r
	}
	s.mu.Unlock()
	if s.Fallback != nil {
		return s.Fallback(req)
	}
	return Reply{Status: http.StatusInternalServerError, ErrorMessage: "llmtest: no scripted reply left"}
}

// chunks paces the chunks of one streamed reply: wait before each (Delay), stop after
// CutAfter, flush after each, and report a client that left.
type chunks struct {
	s     *Server
	w     http.ResponseWriter
	r     *http.Request
	reply *Reply
	sent  int
	cut   bool
}

// send writes one chunk (already framed for the wire) unless the stream was cut; it
// returns false when the stream must stop (cut, or the client left).
func (c *chunks) send(frame []byte) bool {
	if c.cut {
		return false
	}
	if c.reply.CutAfter > 0 && c.sent >= c.reply.CutAfter {
		c.cut = true
		if hj, ok := c.w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
			}
		}
		return false
	}
	if d := c.reply.Delay; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-c.r.Context().Done():
			t.Stop()
			c.s.gone <- time.Now()
			c.cut = true
			return false
		case <-t.C:
		}
	}
	if c.s.OnSend != nil {
		c.s.OnSend(frame)
	}
	if _, err := c.w.Write(frame); err != nil {
		c.cut = true
		return false
	}
	if f, ok := c.w.(http.Flusher); ok {
		f.Flush()
	}
	c.sent++
	return true
}

// writeError writes an error answer with the reply's status and headers.
func writeError(w http.ResponseWriter, reply *Reply, body any) {
	for k, vs := range reply.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(reply.Status)
	_ = json.NewEncoder(w).Encode(body)
}

// startStream writes the headers of a streamed answer.
func startStream(w http.ResponseWriter, reply *Reply, contentType string) {
	for k, vs := range reply.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// sseData frames v as one SSE "data:" event.
func sseData(v any) []byte {
	b, _ := json.Marshal(v)
	out := make([]byte, 0, len(b)+8)
	out = append(out, "data: "...)
	out = append(out, b...)
	return append(out, "\n\n"...)
}

// sseEvent frames v as an SSE event with a name (Anthropic's wire).
func sseEvent(name string, v any) []byte {
	b, _ := json.Marshal(v)
	out := make([]byte, 0, len(b)+len(name)+16)
	out = append(out, "event: "...)
	out = append(out, name...)
	out = append(out, "\ndata: "...)
	out = append(out, b...)
	return append(out, "\n\n"...)
}
