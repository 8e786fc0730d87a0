package client

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"strconv"

	sse "github.com/tmaxmax/go-sse"
)

// StreamEvent is one Server-Sent Events frame of an execution stream.
type StreamEvent struct {
	ID    int    // the per-execution sequence number (0 for the chat stream's first frame)
	Event string // execution, thinking, tool_start, tool_end, content, done, error
	Data  string // JSON
}

// Terminal reports whether the frame ends the stream.
func (e StreamEvent) Terminal() bool { return e.Event == "done" || e.Event == "error" }

// Stream reads frames of an SSE response; Close it when done.
type Stream struct {
	resp *http.Response
	next func() (sse.Event, error, bool)
	stop func()
}

// Next returns the next frame; io.EOF-like end is reported as ok false.
func (s *Stream) Next() (StreamEvent, bool, error) {
	ev, err, ok := s.next()
	if !ok {
		return StreamEvent{}, false, nil
	}
	if err != nil {
		return StreamEvent{}, false, err
	}
	id, _ := strconv.Atoi(ev.LastEventID)
	return StreamEvent{ID: id, Event: ev.Type, Data: ev.Data}, true, nil
}

// Close ends the stream (the run goes on).
func (s *Stream) Close() error {
	s.stop()
	return s.resp.Body.Close()
}

func (c *Client) openStream(ctx context.Context, method, path string, body any, header http.Header) (*Stream, error) {
	req, err := c.newRequest(ctx, method, path, nil, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range header {
		req.Header[k] = v
	}
	hc := *c.http
	hc.Timeout = 0 // a stream lasts as long as its run
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		raw := make([]byte, 64<<10)
		n, _ := resp.Body.Read(raw)
		return nil, decodeError(resp, raw[:n])
	}
	next, stop := iter.Pull2(sse.Read(resp.Body, &sse.ReadConfig{MaxEventSize: 1 << 20}))
	return &Stream{resp: resp, next: next, stop: stop}, nil
}

// ExecutionStream follows an execution's frames. lastEventID < 0 sends no Last-Event-ID
// (a finished execution then yields its terminal frame only; a live one, frames from now on).
func (c *Client) ExecutionStream(ctx context.Context, id string, lastEventID int) (*Stream, error) {
	h := http.Header{}
	if lastEventID >= 0 {
		h.Set("Last-Event-ID", strconv.Itoa(lastEventID))
	}
	return c.openStream(ctx, http.MethodGet, "/api/v1/executions/"+pathEscape(id)+"/stream", nil, h)
}

// ChatStream sends a message to a session and streams the reply.
func (c *Client) ChatStream(ctx context.Context, sessionID, content string) (*Stream, error) {
	return c.openStream(ctx, http.MethodPost, "/api/v1/chat/sessions/"+pathEscape(sessionID)+"/messages/stream",
		map[string]string{"content": content}, nil)
}

// Collect reads a stream to its terminal frame (or its end) and closes it.
func (s *Stream) Collect() ([]StreamEvent, error) {
	defer s.Close()
	var out []StreamEvent
	for {
		ev, ok, err := s.Next()
		if err != nil {
			return out, err
		}
		if !ok {
			if len(out) == 0 || !out[len(out)-1].Terminal() {
				return out, fmt.Errorf("stream ended without a terminal frame")
			}
			return out, nil
		}
		out = append(out, ev)
		if ev.Terminal() {
			return out, nil
		}
	}
}
