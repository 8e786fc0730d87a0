package client

import (
	"context"
	"encoding/json"
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

// ErrorCode returns the code of a terminal error frame: failed, cancelled, rejected, timeout
// or interrupted; "" for other frames and for frames stored before codes existed.
func (e StreamEvent) ErrorCode() string {
	if e.Event != "error" {
		return ""
	}
	var d struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal([]byte(e.Data), &d)
	return d.Code
}

// Stream reads frames of an SSE response; Close it when done.
type Stream struct {
	resp *http.Response
	next func() (sse.Event, error, bool)
	stop func()
}

// Ended reports whether the server answered 204 No Content: the stream was resumed at or
// past its terminal frame, so there is nothing more (Next reports no frame).
func (s *Stream) Ended() bool { return s.resp.StatusCode == http.StatusNoContent }

// Next returns the next frame; io.EOF-like end is reported as ok false.
func (s *Stream) Next() (StreamEvent, bool, error) {
	if s.Ended() {
		return StreamEvent{}, false, nil
	}
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

func (c *Client) openStream(ctx context.Context, method, path string, body any, header http.Header, opts ...RequestOption) (*Stream, error) {
	req, err := c.newRequest(ctx, method, path, nil, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range header {
		req.Header[k] = v
	}
	for _, o := range opts {
		o(req)
	}
	hc := *c.http
	hc.Timeout = 0 // a stream lasts as long as its run
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusNoContent {
		resp.Body.Close()
		return &Stream{resp: resp, stop: func() {}}, nil
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
// Resumed at or past the terminal frame, the stream is Ended and yields nothing.
func (c *Client) ExecutionStream(ctx context.Context, id string, lastEventID int) (*Stream, error) {
	h := http.Header{}
	if lastEventID >= 0 {
		h.Set("Last-Event-ID", strconv.Itoa(lastEventID))
	}
	return c.openStream(ctx, http.MethodGet, "/api/v1/executions/"+pathEscape(id)+"/stream", nil, h)
}

// ChatStream sends a message to a session and streams the reply. With WithIdempotencyKey a
// retry (same key and content) makes no second turn but resumes the first one's stream:
// from its start, or after WithLastEventID; past its terminal frame the stream is Ended.
func (c *Client) ChatStream(ctx context.Context, sessionID, content string, opts ...RequestOption) (*Stream, error) {
	return c.openStream(ctx, http.MethodPost, "/api/v1/chat/sessions/"+pathEscape(sessionID)+"/messages/stream",
		map[string]string{"content": content}, nil, opts...)
}

// Collect reads a stream to its terminal frame (or its end, which for a chat turn whose run
// waits for approval or for an answer comes after its approval_required frame) and closes it. An Ended stream
// yields no frames and no error.
func (s *Stream) Collect() ([]StreamEvent, error) {
	defer s.Close()
	if s.Ended() {
		return nil, nil
	}
	var out []StreamEvent
	for {
		ev, ok, err := s.Next()
		if err != nil {
			return out, err
		}
		if !ok {
			// A chat stream ends after approval_required: its run waits for a decision.
			if len(out) == 0 || !out[len(out)-1].Terminal() && out[len(out)-1].Event != "approval_required" {
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
