package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/store"
)

// defaultHeartbeat is how often an idle stream gets a ": ping" comment.
const defaultHeartbeat = 15 * time.Second

// pollInterval is how often a stream re-checks an execution that is not running in this
// process (queued, awaiting approval, or on another node) when no change wakes it first.
// Changes wake it (this node's, and other nodes' over LISTEN/NOTIFY): this is only the net
// under a message lost with a connection.
const pollInterval = 5 * time.Second

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
	translate func(store.Event) []byte
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

func (s *sseWriter) frame(ev store.Event) error {
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

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func isTerminalFrame(ev store.Event) bool { return ev.Event == "done" || ev.Event == "error" }

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
	if after < 0 || !store.IsTerminal(x.Status) {
		return false, nil
	}
	// An ended execution's frames are all stored: its terminal frame commits with its status.
	last, err := s.store.EventLastSeq(ctx, x.ID)
	return err == nil && after >= last, err
}

// streamExecution sends an execution's frames after `after` (-1: a finished execution sends
// only its terminal frame, a live one the frames from now on) until its terminal frame, the
// client leaving, or the server shutting down. Leaving never cancels the run. A run of this
// node is followed in memory; a run on another node through the frames it sends this one
// (Engine.Follow), the store filling in what came before.
func (s *Server) streamExecution(ctx context.Context, sse *sseWriter, ws, id string, after int) error {
	defer s.metrics.StreamOpened()()
	ping := time.NewTicker(s.heartbeat)
	defer ping.Stop()
	sent := after
	// fromNow: the client gave no Last-Event-ID, so whatever terminal frame ends the run is
	// owed to it even if the run ended between its request and this stream's first look.
	fromNow := after < 0
	send := func(evs []store.Event) (bool, error) {
		for _, ev := range evs {
			if ev.Seq <= sent {
				continue
			}
			pause := sse.endAtPause && ev.Event == "approval_required"
			if pause {
				// The frame ends the chat stream: it goes out once the pause is recorded, so the
				// client's next message finds the run waiting for it.
				if x, err := s.awaitExecution(ctx, ws, id); x == nil || err != nil {
					return true, err
				}
			}
			if err := sse.frame(ev); err != nil {
				return false, err
			}
			sent = ev.Seq
			if isTerminalFrame(ev) || pause {
				return true, nil
			}
		}
		return false, nil
	}
	var feed *runtime.Feed // following the run on other nodes, once it is not here
	defer func() { feed.Close() }()
	for {
		// Watch before looking, so a change between the look and the wait is not missed.
		changed, unwatch := s.engine.Watch(id)
		sub, live := s.engine.Subscribe(id)
		if live {
			unwatch()
		}
		if live {
			if sent < 0 {
				sent = sub.Last()
			} else if sent < sub.Base() {
				// Frames from before this run started here are only in the store.
				stored, err := s.store.EventList(ctx, id, sent)
				if err != nil {
					sub.Close()
					return err
				}
				if end, err := send(stored); end || err != nil {
					sub.Close()
					return err
				}
			}
			for closed := false; !closed; {
				select {
				case <-ctx.Done():
					sub.Close()
					return nil
				case <-s.streamsDone:
					sub.Close()
					return nil
				case <-ping.C:
					if err := sse.ping(); err != nil {
						sub.Close()
						return nil
					}
				case <-sub.Signal():
					var evs []store.Event
					evs, closed = sub.Next(sent)
					if end, err := send(evs); end || err != nil {
						sub.Close()
						return nil
					}
				}
			}
			sub.Close()
			continue // the run stopped here without a terminal frame (awaiting approval): look again
		}
		if feed == nil {
			// Registered before the look below, so nothing sent meanwhile is missed.
			feed = s.engine.Follow(id)
		}
		status := feed.Status()
		x, err := s.store.ExecutionGet(ctx, ws, id)
		if err != nil {
			unwatch()
			return nil
		}
		if sent < 0 {
			stored, err := s.store.EventList(ctx, id, 0)
			if err != nil {
				unwatch()
				return err
			}
			if store.IsTerminal(x.Status) && len(stored) > 0 {
				unwatch()
				_, err := send(stored[len(stored)-1:])
				return err
			}
			sent = 0
			if len(stored) > 0 {
				sent = stored[len(stored)-1].Seq
			}
			if x.Status == store.StatusRunning {
				// Live elsewhere: "from now on" starts at what reaches this node from there.
				if frames, _, ready := feed.Frames(sent); ready && len(frames) > 0 {
					sent = max(sent, frames[len(frames)-1].Seq)
				}
			}
		} else {
			stored, err := s.store.EventList(ctx, id, sent)
			if err != nil {
				unwatch()
				return err
			}
			if end, err := send(stored); end || err != nil {
				unwatch()
				return err
			}
		}
		if store.IsTerminal(x.Status) {
			unwatch()
			if fromNow {
				// The run ended just as this stream attached: send its terminal frame.
				stored, err := s.store.EventList(ctx, id, 0)
				if err == nil && len(stored) > 0 && isTerminalFrame(stored[len(stored)-1]) {
					_ = sse.frame(stored[len(stored)-1])
				}
			}
			return nil
		}
		end, err := s.followRemote(ctx, sse, feed, id, status, changed, ping, send, &sent)
		unwatch()
		if end || err != nil || ctx.Err() != nil || isClosed(s.streamsDone) {
			return nil
		}
	}
}

// followRemote sends the frames of a run on another node as they arrive, until the run's
// terminal frame (end), a change that calls for a new look (its status changed, here or
// there), the poll interval, or the stream's end.
func (s *Server) followRemote(ctx context.Context, sse *sseWriter, feed *runtime.Feed, id string, status uint64,
	changed <-chan struct{}, ping *time.Ticker, send func([]store.Event) (bool, error), sent *int) (bool, error) {
	wait := time.NewTimer(pollInterval)
	defer wait.Stop()
	for {
		arrived := feed.Changed()
		if feed.Status() != status {
			return false, nil
		}
		if frames, stored, ready := feed.Frames(*sent); ready {
			if stored > *sent {
				// Frames up to stored are in the store (sent before this node followed, or too
				// big for a message).
				evs, err := s.store.EventList(ctx, id, *sent)
				if err != nil {
					return false, err
				}
				if end, err := send(evs); end || err != nil {
					return end, err
				}
			}
			if end, err := send(frames); end || err != nil {
				return end, err
			}
		}
		select {
		case <-ctx.Done():
			return false, nil
		case <-s.streamsDone:
			return false, nil
		case <-ping.C:
			if err := sse.ping(); err != nil {
				return false, err
			}
		case <-changed:
			return false, nil
		case <-wait.C:
			return false, nil
		case <-arrived:
		}
	}
}

// clientGoneError is a failed write to a stream: the client has left. The run goes on; the
// request ends quietly (logged at debug level, see handlerError).
type clientGoneError struct{ err error }

func (e *clientGoneError) Error() string { return "stream client gone: " + e.err.Error() }
func (e *clientGoneError) Unwrap() error { return e.err }
