package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
)

// recorder tees a response so it can be stored for replay.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (rw *recorder) WriteHeader(code int) {
	if rw.status == 0 {
		rw.status = code
	}
	rw.ResponseWriter.WriteHeader(code)
}

func (rw *recorder) Write(b []byte) (int, error) {
	if rw.status == 0 {
		rw.status = http.StatusOK
	}
	rw.body.Write(b)
	return rw.ResponseWriter.Write(b)
}

// idempotent makes a creating POST safe to retry with an Idempotency-Key: the first successful
// response is stored and replayed for the same key and body; another body is a 409.
func (s *Server) idempotent(next handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		key := r.Header.Get("Idempotency-Key")
		if key == "" {
			return next(w, r)
		}
		if len(key) > 255 || !printable(key) {
			return badRequest("Idempotency-Key must be 1 to 255 printable ASCII characters")
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
		if err != nil {
			return errorf(http.StatusRequestEntityTooLarge, "request body exceeds %d bytes", maxBodyBytes)
		}
		sum := sha256.Sum256([]byte(r.Method + " " + r.URL.Path + "\n" + string(body)))
		hash := hex.EncodeToString(sum[:])
		ws := s.workspace(r)
		prev, err := s.store.IdempotencyBegin(r.Context(), ws, key, hash)
		if err != nil {
			return err
		}
		if prev != nil {
			switch {
			case prev.RequestHash != hash:
				return conflict("Idempotency-Key %q was already used with a different request body", key)
			case prev.Status == 0:
				return conflict("a request with Idempotency-Key %q is still in progress; retry later", key)
			}
			w.Header().Set("Idempotent-Replayed", "true")
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(prev.Response)))
			w.WriteHeader(prev.Status)
			_, _ = io.WriteString(w, prev.Response)
			return nil
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &recorder{ResponseWriter: w}
		herr := next(rec, r)
		// Store the outcome even if the client has gone: the work was done.
		ctx := context.WithoutCancel(r.Context())
		if herr == nil && rec.status >= 200 && rec.status < 300 {
			if err := s.store.IdempotencyFinish(ctx, ws, key, rec.status, rec.body.String()); err != nil {
				s.log.Error("store idempotent response", "error", err)
			}
			return nil
		}
		if err := s.store.IdempotencyRelease(ctx, ws, key); err != nil {
			s.log.Error("release idempotency key", "error", err)
		}
		return herr
	}
}
