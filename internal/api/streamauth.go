package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/agentplane/agentplane/internal/background"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// defaultKeyRecheck is how often a stream opened with an API key reads the key again. A read
// is one primary-key lookup (BenchmarkStreamKeyRecheck), so a stream costs half a query a
// second, and a revoked, rotated or expired key loses its streams within this time on every
// node, with no message between nodes.
const defaultKeyRecheck = 2 * time.Second

// errKeyEnded is the cause of a stream's end when its API key stopped working.
type errKeyEnded struct{ why string }

func (e *errKeyEnded) Error() string { return e.why }

// streamKeyed is streamExecution for a request: a stream opened with an API key ends once
// the key is revoked, rotated or expires, with a terminal `error` frame of code
// unauthorized (the run goes on). Streams of a login token, or of the emulator, are as is.
func (s *Server) streamKeyed(r *http.Request, sse *sseWriter, ws, id string, after int) error {
	ctx, stop := s.watchKey(r)
	defer stop()
	err := s.streamExecution(ctx, sse, ws, id, after)
	var ended *errKeyEnded
	if !errors.As(context.Cause(ctx), &ended) || r.Context().Err() != nil {
		return err
	}
	// The frame keeps the id of the last one sent, so a client that resumes with a valid key
	// and Last-Event-ID misses nothing.
	data, _ := json.Marshal(StreamEventError{Code: "unauthorized", Message: ended.why})
	_ = sse.frame(domain.Event{Seq: max(sse.last, after), Event: "error", Data: data})
	return nil
}

// watchKey returns the request's context, cancelled with an *errKeyEnded cause once the API
// key that authenticated it no longer works; stop ends the watch.
func (s *Server) watchKey(r *http.Request) (context.Context, func()) {
	k := apiKeyOf(r)
	hash, _ := r.Context().Value(apiKeyHashCtx).(string)
	if k == nil || hash == "" {
		return r.Context(), func() {}
	}
	ctx, cancel := context.WithCancelCause(r.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		background.Every(ctx, s.keyRecheck, func() bool {
			if why := s.keyEnded(ctx, k, hash); why != "" {
				cancel(&errKeyEnded{why})
				return false
			}
			return true
		})
	}()
	return ctx, func() {
		cancel(nil)
		<-done
	}
}

// keyEnded reads the key again, past the key cache: "" while it works, else why it does not.
// A failed read keeps the stream (a database hiccup is not a revocation).
func (s *Server) keyEnded(ctx context.Context, k *domain.APIKey, hash string) string {
	if k.ExpiresAt != nil && !time.Now().Before(k.ExpiresAt.Time) {
		return fmt.Sprintf("API key %s expired at %s: this stream has ended (the run goes on)", k.KeyPrefix, k.ExpiresAt.UTC().Format(time.RFC3339))
	}
	cur, err := s.store.APIKeyByHash(ctx, hash)
	switch {
	case store.IsNotFound(err):
		return fmt.Sprintf("API key %s was revoked or rotated: this stream has ended (the run goes on)", k.KeyPrefix)
	case err != nil:
		if ctx.Err() == nil {
			s.log.Warn("could not re-check a stream's api key", slog.String("key_id", k.ID), slog.Any("error", err))
		}
		return ""
	case cur.ExpiresAt != nil && !time.Now().Before(cur.ExpiresAt.Time):
		return fmt.Sprintf("API key %s expired at %s: this stream has ended (the run goes on)", k.KeyPrefix, cur.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return ""
}
