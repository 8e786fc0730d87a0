package openaichat

import (
	"bytes"
	"io"
	"net/http"
)

// exchange watches the HTTP answer of one call through an SDK middleware: its status and
// header (for error bodies the SDK cannot decode), and whether the stream's end marker
// went by, which the SDK does not tell.
type exchange struct {
	res *http.Response
	end *endWatch
}

// watch is the SDK middleware recording the answer of x's call.
func (x *exchange) watch(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	res, err := next(req)
	if err != nil || res == nil {
		return res, err
	}
	x.res = res
	if res.StatusCode < 300 && res.Body != nil {
		x.end = &endWatch{ReadCloser: res.Body}
		res.Body = x.end
	}
	return res, err
}

// endSeen reports whether the stream's "data: [DONE]" line was read.
func (x *exchange) endSeen() bool { return x.end != nil && x.end.seen }

// endWatch passes a streamed body through, looking for the "data: [DONE]" line at the
// start of a line (the bytes may also appear inside a JSON string, never after a newline).
type endWatch struct {
	io.ReadCloser
	line []byte // the start of the current line, at most len("data: [DONE]")
	seen bool
}

var doneLine = []byte("data: [DONE]")

// Read reads from the body and follows its lines.
func (w *endWatch) Read(p []byte) (int, error) {
	n, err := w.ReadCloser.Read(p)
	for b := p[:n]; len(b) > 0 && !w.seen; {
		i := bytes.IndexByte(b, '\n')
		part := b
		if i >= 0 {
			part = b[:i]
		}
		if room := len(doneLine) - len(w.line); room > 0 {
			w.line = append(w.line, part[:min(room, len(part))]...)
		}
		if i < 0 {
			break
		}
		w.seen = isDone(w.line)
		w.line = w.line[:0]
		b = b[i+1:]
	}
	if err == io.EOF && !w.seen {
		w.seen = isDone(w.line) // a last line without its newline
	}
	return n, err
}

// isDone reports whether a line's start is the end marker, "data:" with or without
// the space.
func isDone(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("data:"))
	return ok && bytes.HasPrefix(bytes.TrimPrefix(rest, []byte(" ")), []byte("[DONE]"))
}
