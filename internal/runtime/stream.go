package runtime

import (
	"context"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

// StreamRequest says which frames of an execution Engine.Stream sends.
type StreamRequest struct {
	WorkspaceID, ExecutionID string
	// After is the id of the last frame the client has; -1 when it has none: a finished
	// execution then sends only its terminal frame, a live one the frames from now on.
	After int
	// EndAtPause ends the stream after an approval_required frame, sent once the pause is
	// recorded (a chat turn's stream: the client's next message finds the run waiting).
	EndAtPause bool
	// Heartbeat is how often an idle stream pings.
	Heartbeat time.Duration
	// Closing, once closed, ends the stream (the server closing its streams).
	Closing <-chan struct{}
}

// StreamSink is where Engine.Stream sends what it follows; the API writes it as SSE.
type StreamSink struct {
	Frame func(domain.Event) error
	Ping  func() error
}

// stream is one Engine.Stream call: sent is the id of the last frame sent.
type stream struct {
	e       *Engine
	req     StreamRequest
	sink    StreamSink
	w       *watch
	ping    *time.Ticker
	sent    int
	fromNow bool
}

// Stream sends an execution's frames after req.After until its terminal frame, ctx ending,
// or req.Closing; ending never cancels the run. A run of this node is followed in memory; a
// run on another node through the frames it sends this one (the cluster bus), the store
// filling in what came before. Errors of the sink end the stream.
func (e *Engine) Stream(ctx context.Context, req StreamRequest, sink StreamSink) error {
	s := &stream{e: e, req: req, sink: sink, w: e.newWatch(req.ExecutionID), ping: time.NewTicker(req.Heartbeat),
		sent: req.After, fromNow: req.After < 0}
	defer s.ping.Stop()
	defer s.w.close()
	for {
		s.w.arm()
		if sub, live := e.hub.Subscribe(req.ExecutionID); live {
			s.w.disarm()
			if end, err := s.local(ctx, sub); end {
				return err
			}
			continue // the run stopped here without a terminal frame (awaiting approval): look again
		}
		if end, err := s.remote(ctx); end {
			return err
		}
	}
}

// send sends the frames after s.sent; end reports the terminal frame (or the pause that
// ends the stream) sent, or a frame that could not be.
func (s *stream) send(ctx context.Context, evs []domain.Event) (bool, error) {
	for _, ev := range evs {
		if ev.Seq <= s.sent {
			continue
		}
		pause := s.req.EndAtPause && ev.Event == "approval_required"
		if pause {
			// The frame goes out once the pause is recorded.
			if x, err := s.e.Await(ctx, s.req.WorkspaceID, s.req.ExecutionID); x == nil || err != nil {
				return true, err
			}
		}
		if err := s.sink.Frame(ev); err != nil {
			return true, err
		}
		s.sent = ev.Seq
		if IsTerminalFrame(ev) || pause {
			return true, nil
		}
	}
	return false, nil
}

// local follows a run of this node from its hub topic until the run leaves this node
// (end false) or the stream ends.
func (s *stream) local(ctx context.Context, sub *Subscription) (bool, error) {
	defer sub.Close()

	// Frames from before this run started here are only in the store.
	if s.sent < 0 {
		s.sent = sub.Last()
	} else if s.sent < sub.Base() {
		stored, err := s.e.st.EventList(ctx, s.req.ExecutionID, s.sent)
		if err != nil {
			return true, err
		}
		if end, err := s.send(ctx, stored); end || err != nil {
			return true, err
		}
	}

	// Then the live frames, until the topic closes.
	for {
		select {
		case <-ctx.Done():
			return true, nil
		case <-s.req.Closing:
			return true, nil
		case <-s.ping.C:
			if s.sink.Ping() != nil {
				return true, nil
			}
		case <-sub.Signal():
			evs, closed := sub.Next(s.sent)
			if end, err := s.send(ctx, evs); end || err != nil {
				return true, nil
			}
			if closed {
				return false, nil
			}
		}
	}
}

// remote follows a run not in this process: the store's frames, then those another node
// sends, until a change calls for a new look (end false) or the stream ends.
func (s *stream) remote(ctx context.Context) (bool, error) {
	defer s.w.disarm()
	feed := s.w.follow() // before the look below, so nothing sent meanwhile is missed
	status := feed.Status()
	x, err := s.e.st.ExecutionGet(ctx, s.req.WorkspaceID, s.req.ExecutionID)
	if err != nil {
		return true, nil
	}

	// Catch up from the store.
	if end, err := s.catchUp(ctx, x, feed); end || err != nil {
		return true, err
	}
	if domain.IsTerminal(x.Status) {
		if s.fromNow {
			// The run ended just as this stream attached: send its terminal frame.
			stored, err := s.e.st.EventList(ctx, x.ID, 0)
			if err == nil && len(stored) > 0 && IsTerminalFrame(stored[len(stored)-1]) {
				_ = s.sink.Frame(stored[len(stored)-1])
			}
		}
		return true, nil
	}

	// Then what the node running it sends.
	end, err := s.follow(ctx, feed, status)
	return end || err != nil || ctx.Err() != nil || isClosed(s.req.Closing), nil
}

// catchUp sends the stored frames after s.sent; a stream from now on of a run that ended
// gets only its terminal frame, and of one running elsewhere starts at what reached this
// node from there.
func (s *stream) catchUp(ctx context.Context, x *domain.Execution, feed *Feed) (bool, error) {
	if s.sent >= 0 {
		stored, err := s.e.st.EventList(ctx, x.ID, s.sent)
		if err != nil {
			return true, err
		}
		return s.send(ctx, stored)
	}
	stored, err := s.e.st.EventList(ctx, x.ID, 0)
	if err != nil {
		return true, err
	}
	if domain.IsTerminal(x.Status) && len(stored) > 0 {
		_, err := s.send(ctx, stored[len(stored)-1:])
		return true, err
	}
	s.sent = 0
	if len(stored) > 0 {
		s.sent = stored[len(stored)-1].Seq
	}
	if x.Status == domain.StatusRunning {
		if frames, _, ready := feed.Frames(s.sent); ready && len(frames) > 0 {
			s.sent = max(s.sent, frames[len(frames)-1].Seq)
		}
	}
	return false, nil
}

// follow sends the frames of a run on another node as they arrive, until the run's
// terminal frame (end), a change that calls for a new look (its status changed, here or
// there), the poll interval, or the stream's end.
func (s *stream) follow(ctx context.Context, feed *Feed, status uint64) (bool, error) {
	wait := time.NewTimer(followPoll)
	defer wait.Stop()
	for {
		arrived := feed.Changed()
		if feed.Status() != status {
			return false, nil
		}
		if end, err := s.sendArrived(ctx, feed); end || err != nil {
			return end, err
		}
		select {
		case <-ctx.Done():
			return false, nil
		case <-s.req.Closing:
			return false, nil
		case <-s.ping.C:
			if err := s.sink.Ping(); err != nil {
				return false, err
			}
		case <-s.w.changed:
			return false, nil
		case <-wait.C:
			return false, nil
		case <-arrived:
		}
	}
}

// sendArrived sends the frames the feed heard, reading first from the store those it says
// are stored (sent before this node followed, or too big for a message).
func (s *stream) sendArrived(ctx context.Context, feed *Feed) (bool, error) {
	frames, stored, ready := feed.Frames(s.sent)
	if !ready {
		return false, nil
	}
	if stored > s.sent {
		evs, err := s.e.st.EventList(ctx, s.req.ExecutionID, s.sent)
		if err != nil {
			return false, err
		}
		if end, err := s.send(ctx, evs); end || err != nil {
			return end, err
		}
	}
	return s.send(ctx, frames)
}

// IsTerminalFrame reports whether a frame ends its execution's stream (done or error).
func IsTerminalFrame(ev domain.Event) bool { return ev.Event == "done" || ev.Event == "error" }

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
