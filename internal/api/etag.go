package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
)

// A GET answered with the JSON envelope carries a strong ETag, a hash of its body, so a client
// that kept the body can ask again with If-None-Match and get 304 Not Modified without it. The
// body is built as usual: the tag saves the client the transfer, not the server the work (the
// emulator alone keeps bodies, see readCache).

// etagCacheControl makes clients revalidate a kept body every time (no-cache) and keeps it out
// of shared caches (private): the body depends on the caller's key or token.
const etagCacheControl = "private, no-cache"

// etagged answers GET h with an ETag, and with 304 when If-None-Match names it. Other statuses
// and errors go out as h made them.
func etagged(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		buf := &bufferedWriter{header: w.Header()}
		if err := h(buf, r); err != nil {
			return err
		}
		if buf.status != http.StatusOK {
			buf.flushTo(w)
			return nil
		}
		writeTagged(w, r, buf.body.Bytes(), entityTag(buf.body.Bytes()))
		return nil
	}
}

// entityTag is the strong ETag of a body: 128 bits of its SHA-256, quoted.
func entityTag(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`
}

// writeTagged sends a 200 body with its tag, or 304 without it when the request's
// If-None-Match names the tag. The body's other headers (Content-Type) are set already.
func writeTagged(w http.ResponseWriter, r *http.Request, body []byte, tag string) {
	h := w.Header()
	h.Set("ETag", tag)
	h.Set("Cache-Control", etagCacheControl)
	if inm := r.Header.Get("If-None-Match"); inm != "" && noneMatchHas(inm, tag) {
		h.Del("Content-Type")
		h.Del("Content-Length")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// noneMatchHas reports whether an If-None-Match value names tag: "*", or a list of entity tags
// compared weakly (RFC 9110 13.1.2: W/"x" matches "x").
func noneMatchHas(inm, tag string) bool {
	if strings.TrimSpace(inm) == "*" {
		return true
	}
	for _, t := range strings.Split(inm, ",") {
		if strings.TrimPrefix(strings.TrimSpace(t), "W/") == tag {
			return true
		}
	}
	return false
}

// bufferedWriter keeps a handler's response (its headers go to the real writer's map) so it
// can be tagged before it is sent.
type bufferedWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header { return b.header }

func (b *bufferedWriter) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// flushTo sends the kept response as it was made.
func (b *bufferedWriter) flushTo(w http.ResponseWriter) {
	if b.status == 0 {
		return // nothing was written: the caller answers
	}
	w.WriteHeader(b.status)
	_, _ = w.Write(b.body.Bytes())
}
