package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/runtime"
)

// defaultHeartbeat is how often an idle stream gets a ": ping" comment.
const defaultHeartbeat = 15 * time.Second

// sseWriter writes Server-Sent Events frames, flushing each one.
type sseWriter struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	last int // id of the last frame written
	// endAtPause ends the stream after an approval_required frame (a chat turn's stream:
	// the turn continues once decided, and the client reads its end from the session).
	endAtPause bool
	// translate, when set, writes the frames in another protocol (the OpenAI-compatible
	// streams): it returns the bytes to send for a frame, nil for none.
	translate func(domain.Event) []byte
}

func newSSE(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream outlives the server's write timeout
	w.WriteHeader(http.StatusOK)
	s := &sseWriter{w: w, rc: rc}
	_ = rc.Flush()
	return s
}

func (s *sseWriter) frame(ev domain.Event) error {
	if s.translate != nil {
		s.last = ev.Seq
		if b := s.translate(ev); b != nil {
			return s.write(b)
		}
		return nil
	}
	if _, err := fmt.Fprintf(s.w, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Event, ev.Data); err != nil {
		return &clientGoneError{err}
	}
	s.last = ev.Seq
	return s.flush()
}

// write sends bytes already in the stream's format and flushes them.
func (s *sseWriter) write(b []byte) error {
	if _, err := s.w.Write(b); err != nil {
		return &clientGoneError{err}
	}
	return s.flush()
}

func (s *sseWriter) ping() error {
	if _, err := s.w.Write([]byte(": ping\n\n")); err != nil {
		return &clientGoneError{err}
	}
	return s.flush()
}

func (s *sseWriter) flush() error {
	if err := s.rc.Flush(); err != nil {
		return &clientGoneError{err}
	}
	return nil
}

// lastEventIDParam is the query form of Last-Event-ID, documented with minimum 0.
const lastEventIDParam = "last_event_id"

// lastEventID reads Last-Event-ID (header, or last_event_id query for EventSource polyfills);
// -1 means none was sent.
func lastEventID(r *http.Request) (int, error) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get(lastEventIDParam)
	}
	if v == "" {
		return -1, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0, badRequest("Last-Event-ID (or %s) must be a non-negative integer, got %q", lastEventIDParam, v)
	}
	return n, nil
}

// pastEnd reads execution id of workspace ws (a not-found error when there is none) and
// reports whether a stream of it resumed after frame `after` has nothing more to send: it
// has ended and its terminal frame is at or before `after`. The answer is then 204, which
// tells EventSource to stop reconnecting.
func (s *Server) pastEnd(ctx context.Context, ws, id string, after int) (bool, error) {
	x, err := s.store.ExecutionGet(ctx, ws, id)
	if err != nil {
		return false, err
	}
	if after < 0 || !domain.IsTerminal(x.Status) {
		return false, nil
	}
	// An ended execution's frames are all stored: its terminal frame commits with its status.
	last, err := s.store.EventLastSeq(ctx, x.ID)
	return err == nil && after >= last, err
}

// streamExecution sends an execution's frames after `after` as SSE (see runtime.Stream:
// it replays, follows the run here or on another node, and ends at its terminal frame).
func (s *Server) streamExecution(ctx context.Context, sse *sseWriter, ws, id string, after int) error {
	defer s.metrics.StreamOpened()()
	req := runtime.StreamRequest{WorkspaceID: ws, ExecutionID: id, After: after, EndAtPause: sse.endAtPause,
		Heartbeat: s.heartbeat, Closing: s.streamsDone}
	return s.engine.Stream(ctx, req, runtime.StreamSink{Frame: sse.frame, Ping: sse.ping})
}

// clientGoneError is a failed write to a stream: the client has left. The run goes on; the
// request ends quietly (logged at debug level, see handlerError).
type clientGoneError struct{ err error }

func (e *clientGoneError) Error() string { return "stream client gone: " + e.err.Error() }
func (e *clientGoneError) Unwrap() error { return e.err }
