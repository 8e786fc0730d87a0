package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentplane/agentplane/internal/background"
	"github.com/agentplane/agentplane/internal/domain"
)

// recorder tees a response so it can be stored for replay.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
	// replay, when set (see setReplay), is stored for replays instead of body: the response
	// holds a secret shown once, which must not be kept.
	replay []byte
}

// setReplay makes an idempotent request's replays answer body instead of what was sent (a
// response without the one-time secret it held). Without an Idempotency-Key it does nothing.
func setReplay(w http.ResponseWriter, body []byte) {
	if rec, ok := w.(*recorder); ok {
		rec.replay = body
	}
}

// Unwrap lets http.ResponseController reach the connection (an idempotent request that
// streams flushes its frames).
func (rw *recorder) Unwrap() http.ResponseWriter { return rw.ResponseWriter }

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

// maxIdempotencyKey bounds an Idempotency-Key; idempotencyKeyPattern is printable's rule as the
// document publishes it (printable ASCII without space: ! to ~).
const (
	maxIdempotencyKey     = 255
	idempotencyKeyPattern = `^[\x21-\x7E]+$`
)

// idempotencyRequest reads a request's Idempotency-Key ("" when it has none) and, with a key,
// the hash of its method, path and body; the body stays readable.
func idempotencyRequest(w http.ResponseWriter, r *http.Request) (key, hash string, err error) {
	key = r.Header.Get("Idempotency-Key")
	if key == "" {
		return "", "", nil
	}
	if len(key) > maxIdempotencyKey || !printable(key) {
		return "", "", badRequest("Idempotency-Key must be 1 to %d printable ASCII characters", maxIdempotencyKey)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		return "", "", errorf(http.StatusRequestEntityTooLarge, "request body exceeds %d bytes", maxBodyBytes)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	sum := sha256.Sum256([]byte(r.Method + " " + r.URL.Path + "\n" + string(body)))
	return key, hex.EncodeToString(sum[:]), nil
}

const idempotencyClaimCtx ctxKey = 300

// idempotencyClaimOf returns the Idempotency-Key claim of the request being handled, or nil.
func idempotencyClaimOf(r *http.Request) *domain.IdempotencyClaim {
	c, _ := r.Context().Value(idempotencyClaimCtx).(*domain.IdempotencyClaim)
	return c
}

// idempotent makes a creating POST safe to retry with an Idempotency-Key: the first successful
// response is stored and replayed for the same key and body; another body is a 409, and so
// is the same request while the first is still in progress. The key is leased while the
// request runs and the lease renewed, so the key of a process that died is taken over by a
// retry once the lease ran out (at most Config.IdempotencyLease): the retry replays what was
// recorded, answers from the execution the dead request created (see submit), or runs the
// request.
func (s *Server) idempotent(next handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		key, hash, err := idempotencyRequest(w, r)
		if err != nil {
			return err
		}
		if key == "" {
			return next(w, r)
		}
		claim, prev, err := s.store.IdempotencyBegin(r.Context(), s.workspace(r), key, hash, s.lease)
		if err != nil {
			return err
		}
		if prev != nil {
			switch {
			case prev.RequestHash != hash:
				return conflict("Idempotency-Key %q was already used with a different request body", key)
			case prev.Status == 0:
				e := conflict("a request with Idempotency-Key %q is still in progress; retry later", key)
				// Its lease is renewed while it runs; once it ran out, a retry takes over.
				wait := max(int(math.Ceil(time.Until(prev.LockedUntil.Time).Seconds())), 1)
				e.Header = http.Header{"Retry-After": {strconv.Itoa(wait)}}
				return e
			}
			w.Header().Set("Idempotent-Replayed", "true")
			w.Header().Set("Content-Type", replayType(prev.Response))
			w.Header().Set("Content-Length", strconv.Itoa(len(prev.Response)))
			w.WriteHeader(prev.Status)
			_, _ = io.WriteString(w, prev.Response)
			return nil
		}
		if claim.TakenOver {
			s.log.Info("idempotency key taken over from a request whose lease ran out", "key", key, "execution_id", claim.ExecutionID)
		}
		stop := s.holdLease(claim)
		rec := &recorder{ResponseWriter: w}
		herr := next(rec, r.WithContext(context.WithValue(r.Context(), idempotencyClaimCtx, claim)))
		stop()
		// Store the outcome even if the client has gone: the work was done.
		ctx := context.WithoutCancel(r.Context())
		if herr == nil && rec.status >= 200 && rec.status < 300 {
			stored := rec.body.String()
			if rec.replay != nil {
				stored = string(rec.replay)
			}
			ok, err := s.store.IdempotencyFinish(ctx, claim, rec.status, stored)
			switch {
			case err != nil:
				s.log.Error("store idempotent response", "key", key, "error", err)
			case !ok:
				s.log.Warn("idempotent response not stored: a retry took the key over after its lease ran out", "key", key)
			}
			return nil
		}
		if err := s.store.IdempotencyRelease(ctx, claim); err != nil {
			s.log.Error("release idempotency key", "key", key, "error", err)
		}
		return herr
	}
}

// replayType is the media type of a recorded response: every JSON answer is an object, so
// a recorded body that does not start with "{" is a stream (an OpenAI-compatible request
// with "stream": true), replayed as the stream it was.
func replayType(body string) string {
	if strings.HasPrefix(body, "{") {
		return "application/json"
	}
	return "text/event-stream"
}

// holdLease renews claim's lease every third of it until the returned stop is called (which
// waits for the renewer to end). A renewal that fails is retried at the next tick: the lease
// still has two thirds to run; one that finds the claim lost stops.
func (s *Server) holdLease(claim *domain.IdempotencyClaim) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		background.Every(ctx, s.lease/3, func() bool {
			rctx, rcancel := context.WithTimeout(ctx, s.lease/3)
			ok, err := s.store.IdempotencyRenew(rctx, claim, s.lease)
			rcancel()
			switch {
			case err != nil:
				s.log.Warn("renew idempotency key lease", "key", claim.Key, "error", err)
			case !ok:
				s.log.Warn("idempotency key lease lost to a retry", "key", claim.Key)
				return false
			}
			return true
		})
	})
	return func() {
		cancel()
		wg.Wait()
	}
}
