package api

import (
	"context"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/segmentio/ksuid"
)

type ctxKey int

const requestIDKey ctxKey = iota

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// statusWriter remembers the status for logs and metrics, and keeps Flush reachable.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach Flush and SetWriteDeadline.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// middleware wraps the mux: request id, panic recovery, CORS, logs and metrics.
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rid := r.Header.Get("X-Request-ID")
		if rid == "" || len(rid) > 128 || !printable(rid) {
			rid = ksuid.New().String()
		}
		w.Header().Set("X-Request-ID", rid)
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey, rid))
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.ErrorContext(r.Context(), "panic serving request", slog.String("request_id", rid),
					slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
				if sw.status == 0 {
					s.writeError(sw, r, errorf(http.StatusInternalServerError, "internal error; quote request id %s when reporting it", rid))
				}
			}
			pattern := r.Pattern
			if pattern == "" || pattern == "/" {
				pattern = "unmatched"
			}
			elapsed := time.Since(start)
			s.metrics.HTTPRequest(r.Method, pattern, sw.status, elapsed)
			if s.log.Enabled(r.Context(), slog.LevelDebug) {
				s.log.DebugContext(r.Context(), "request", slog.String("request_id", rid), slog.String("method", r.Method),
					slog.String("path", logPath(r)), slog.Int("status", sw.status), slog.Duration("duration", elapsed))
			}
		}()
		if s.cors.handle(sw, r) {
			return
		}
		if err := checkRequestShape(r); err != nil {
			s.writeError(sw, r, err)
			return
		}
		next.ServeHTTP(sw, r)
	})
}

// MaxHeaderBytes bounds a request's header fields (names and values) in total: a request
// over it is a 431 with the envelope. The HTTP server's own limit (see internal/cli) is set
// well above it, so that net/http's plain-text 431 only meets requests far beyond this one.
const MaxHeaderBytes = 64 << 10

// checkRequestShape refuses, before routing, what no route can serve: oversized headers
// (431), a path with an empty, "." or ".." segment (the mux would answer with a 307 redirect
// to the cleaned path and an HTML body; an API client gets the 404 envelope instead), and
// an X-Workspace-ID that is not UTF-8 text (400 rather than a database error).
func checkRequestShape(r *http.Request) error {
	n := len(r.Method) + len(r.RequestURI)
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4 // ": " and CRLF
		}
	}
	if n > MaxHeaderBytes {
		return errorf(http.StatusRequestHeaderFieldsTooLarge, "request headers must be at most %d bytes in total", MaxHeaderBytes)
	}
	if p := r.URL.Path; !cleanPath(p) {
		return errorf(http.StatusNotFound, "no route for %s %s: the path has an empty, \".\" or \"..\" segment", r.Method, p)
	}
	if ws := r.Header.Get("X-Workspace-ID"); ws != "" && (!utf8.ValidString(ws) || hasControl(ws)) {
		return badRequest("X-Workspace-ID must be a workspace id or slug")
	}
	return nil
}

// cleanPath reports whether a path has no empty, "." or ".." segment (a trailing slash aside).
func cleanPath(p string) bool {
	if p == "/" {
		return true
	}
	if !strings.HasPrefix(p, "/") {
		return false
	}
	segs := strings.Split(strings.TrimSuffix(p[1:], "/"), "/")
	for _, seg := range segs {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// corsPolicy answers CORS preflights and decorates responses for allowed origins.
type corsPolicy struct {
	any     bool
	origins []string
}

func newCORSPolicy(origins []string) corsPolicy {
	p := corsPolicy{}
	for _, o := range origins {
		o = strings.TrimRight(strings.TrimSpace(o), "/")
		if o == "*" {
			p.any = true
		} else if o != "" {
			p.origins = append(p.origins, strings.ToLower(o))
		}
	}
	return p
}

func (p corsPolicy) allows(origin string) bool {
	return p.any || slices.Contains(p.origins, strings.ToLower(origin))
}

// handle sets CORS headers; it returns true when it has answered a preflight itself.
func (p corsPolicy) handle(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	h := w.Header()
	h.Add("Vary", "Origin")
	preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
	if !p.allows(origin) {
		if preflight {
			w.WriteHeader(http.StatusForbidden)
			return true
		}
		return false
	}
	if p.any {
		h.Set("Access-Control-Allow-Origin", "*")
	} else {
		h.Set("Access-Control-Allow-Origin", origin)
	}
	h.Set("Access-Control-Expose-Headers", "X-Request-ID, Idempotent-Replayed, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Location")
	if preflight {
		h.Set("Access-Control-Allow-Methods", "GET, POST, PATCH, PUT, DELETE, OPTIONS")
		if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
			h.Set("Access-Control-Allow-Headers", req)
		} else {
			h.Set("Access-Control-Allow-Headers", "Content-Type, X-API-Key, Authorization, X-Workspace-ID, Idempotency-Key, Last-Event-ID, X-Request-ID")
		}
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	return false
}
