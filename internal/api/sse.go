package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/store"
)

// defaultHeartbeat is how often an idle stream gets a ": ping" comment.
const defaultHeartbeat = 15 * time.Second

// pollInterval is how often a stream re-checks an execution that is not running in this
// process (queued, awaiting approval, or on another node) when no change wakes it first.
const pollInterval = 2 * time.Second

// sseWriter writes Server-Sent Events frames, flushing each one.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
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
	if _, err := fmt.Fprintf(s.w, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Event, ev.Data); err != nil {
		return err
	}
	return s.rc.Flush()
}

func (s *sseWriter) ping() error {
	if _, err := s.w.Write([]byte(": ping\n\n")); err != nil {
		return err
	}
	return s.rc.Flush()
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

// lastEventID reads Last-Event-ID (header, or last_event_id query for EventSource polyfills);
// -1 means none was sent.
func lastEventID(r *http.Request) (int, error) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("last_event_id")
	}
	if v == "" {
		return -1, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0, badRequest("Last-Event-ID must be a non-negative integer, got %q", v)
	}
	return n, nil
}

// streamExecution sends an execution's frames after `after` (-1: a finished execution sends
// only its terminal frame, a live one the frames from now on) until its terminal frame, the
// client leaving, or the server shutting down. Leaving never cancels the run.
func (s *Server) streamExecution(ctx context.Context, sse *sseWriter, ws, id string, after int) error {
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
			if err := sse.frame(ev); err != nil {
				return false, err
			}
			sent = ev.Seq
			if isTerminalFrame(ev) {
				return true, nil
			}
		}
		return false, nil
	}
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
		x, err := s.store.ExecutionGet(ctx, ws, id)
		if err != nil {
			unwatch()
			return nil
		}
		if sent < 0 {
			stored, err := s.store.EventList(ctx, id, 0)
			if err != nil {
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
		wait := time.NewTimer(pollInterval)
		select {
		case <-ctx.Done():
		case <-s.streamsDone:
		case <-ping.C:
			err = sse.ping()
		case <-changed:
		case <-wait.C:
		}
		wait.Stop()
		unwatch()
		if ctx.Err() != nil || err != nil || isClosed(s.streamsDone) {
			return nil
		}
	}
}
