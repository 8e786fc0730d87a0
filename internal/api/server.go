// Package api is agentplane's HTTP layer: one route table drives the mux, the OpenAPI
// document and the scope of every operation, for both the server and the emulator.
package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentplane/agentplane/internal/api/docsui"
	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/datasource"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/experiment"
	"github.com/agentplane/agentplane/internal/metrics"
	"github.com/agentplane/agentplane/internal/ratelimit"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/studio"
	"github.com/agentplane/agentplane/internal/triggers"
)

// Config is what a Server needs.
type Config struct {
	Store  *store.Store
	Logger *slog.Logger
	// Secrets encrypts credential values at rest.
	Secrets *secretbox.Box
	// Emulator turns on the emulator's behaviour: no auth, one namespace, /admin routes.
	Emulator bool
	// WorkspaceID is the namespace of every request while auth is off (the emulator); on the
	// server a request acts in the workspace of its API key.
	WorkspaceID string
	// CORSOrigins lists the origins allowed to call the API from a browser; "*" allows any.
	CORSOrigins []string
	// Reset clears the emulator's data and reloads seed and fixtures (emulator only).
	Reset func(ctx context.Context) error
	// Version is reported by /health.
	Version string
	// Engine runs executions.
	Engine *runtime.Engine
	// DataSources runs data source queries: datasource.Live on the server, seed.Sample
	// in the emulator.
	DataSources datasource.Executor
	// AllowStdioMCP lets MCP tools with the stdio transport be saved (serve
	// --allow-stdio-mcp; always in the emulator, which never runs them).
	AllowStdioMCP bool
	// Heartbeat is how often idle SSE streams get a ": ping" comment (default 15 s).
	Heartbeat time.Duration
	// KeyRecheck is how often an open SSE stream authenticated by an API key reads its key
	// again, to end the stream once the key is revoked, rotated or expired (default 2 s).
	KeyRecheck time.Duration
	// RateLimit is the requests per second each API key may make (server only); zero or less
	// turns limiting off.
	RateLimit float64
	// RateBurst is how many requests a key may make at once above RateLimit (at least 1).
	RateBurst int
	// RateShared, when set, holds the rate limit and failed-login buckets for every node
	// (PostgreSQL or Redis); nil keeps them in this process.
	RateShared ratelimit.Shared
	// LoginLimits bound failed logins per email and per client address; zero rules are
	// DefaultLoginLimits'.
	LoginLimits LoginLimits
	// Plan bounds what each workspace may hold and run (server only; zero values are unlimited).
	Plan Plan
	// Retention is the retention_days of new workspaces (--retention-days) and the ceiling a
	// PATCH may set (--max-retention-days, 0 for none).
	Retention Retention
	// TrustedProxies lists the proxies (addresses or CIDR ranges) whose X-Forwarded-For is
	// believed: behind them the client is the right-most address that is not a trusted proxy.
	TrustedProxies []string
	// JWTSecret signs and verifies the HS256 login tokens of `Authorization: Bearer`; when
	// empty, login and bearer tokens are refused.
	JWTSecret []byte
	// PublicURL is the absolute http(s) base URL clients reach the API at (behind a proxy, say);
	// /openapi.json lists it as the document's one server. Empty: the server is built from
	// each request's Host and scheme.
	PublicURL string
	// IdempotencyLease is how long an Idempotency-Key in progress stays claimed without a
	// renewal (renewed every third of it while its request runs); zero is
	// store.IdempotencyLease (60 s).
	IdempotencyLease time.Duration
	// JWKSURL, when set, is the JWKS of an external identity provider: a bearer token that is
	// not a login token is verified against it (RS256 or ES256), and its email claim must name
	// an existing user.
	JWKSURL string
	// Metrics are the process's Prometheus instruments, served at /metrics; give the engine
	// the same ones (runtime.Config.Metrics) so that runs are counted. Nil: the server makes
	// its own (without the engine's).
	Metrics *metrics.Metrics
	// Experiments, when set, is this node's experiment runner: a new experiment wakes it at
	// once (otherwise a runner of some node finds it at its next look).
	Experiments *experiment.Runner
	// Replier sends the replies of chat platform triggers (Slack, Telegram, WhatsApp) once
	// their runs stop; nil sends none (the emulator). Teams' reply is the response body and
	// needs none.
	Replier *triggers.Replier
}

// maxQueueCount bounds agentplane_queue_depth: past it the gauge reads this many.
const maxQueueCount = 100000

// Server serves the API.
type Server struct {
	cfg     Config
	store   *store.Store
	log     *slog.Logger
	routes  []route
	mux     *http.ServeMux
	handler http.Handler
	openapi []byte // the document without servers, built once
	// bodySchemas holds the compiled request body schema of each route pattern (from the document).
	bodySchemas map[string]*jsonschema.Schema
	// openapiPublic is the document with Config.PublicURL as its server (nil when unset).
	openapiPublic []byte
	metrics       *metrics.Metrics
	cors          corsPolicy
	cache         *readCache // nil unless the emulator (the one writer of its store)
	engine        *runtime.Engine
	// streamsDone is closed by CloseStreams so open SSE streams end on shutdown.
	streamsDone chan struct{}
	closeOnce   sync.Once
	heartbeat   time.Duration
	keyRecheck  time.Duration
	trusted     *auth.IPAllowlist // nil: X-Forwarded-For is never believed
	keys        *keyAuth
	limits      *ratelimit.Limiter // per API key and user; nil when rate limiting is off
	loginEmail  *ratelimit.Limiter // failed logins per email
	loginAddr   *ratelimit.Limiter // failed logins per client address
	jwks        *jwksVerifier      // nil unless Config.JWKSURL is set
	lease       time.Duration      // of an Idempotency-Key in progress
	replies     *hookReplies       // chat platform replies in flight
	triggers    *triggers.Service
}

// New builds a server and its OpenAPI document.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil || cfg.Logger == nil || cfg.Secrets == nil || cfg.Engine == nil || cfg.DataSources == nil {
		return nil, fmt.Errorf("api: Store, Logger, Secrets, Engine and DataSources are required")
	}
	s := &Server{cfg: cfg, store: cfg.Store, log: cfg.Logger, mux: http.NewServeMux(), cors: newCORSPolicy(cfg.CORSOrigins),
		engine: cfg.Engine, streamsDone: make(chan struct{}), heartbeat: cfg.Heartbeat, keys: newKeyAuth(), replies: newHookReplies(),
		triggers: &triggers.Service{Store: cfg.Store, Secrets: cfg.Secrets}}
	if s.heartbeat <= 0 {
		s.heartbeat = defaultHeartbeat
	}
	// A deleted workspace's keys stop at once on every node (the engine tells them all).
	cfg.Engine.OnWorkspaceGone(s.keys.invalidateWorkspace)
	if s.keyRecheck = cfg.KeyRecheck; s.keyRecheck <= 0 {
		s.keyRecheck = defaultKeyRecheck
	}
	if s.lease = cfg.IdempotencyLease; s.lease <= 0 {
		s.lease = domain.IdempotencyLease
	}
	if len(cfg.TrustedProxies) > 0 {
		trusted, err := auth.ParseIPAllowlist(cfg.TrustedProxies)
		if err != nil {
			return nil, fmt.Errorf("trusted proxies: %w", err)
		}
		s.trusted = trusted
	}
	// The read cache is exact only where this process is the database's one writer: the
	// emulator's memory. A database of `serve` may be written by other nodes and by the CLI.
	if cfg.Emulator {
		s.cache = newReadCache(cfg.Store.Generation)
	}
	if cfg.Emulator {
		s.cfg.Plan = Plan{} // the emulator has no plans and no rate limits
	} else {
		s.newLimiters(cfg)
	}
	s.routes = s.routeTable()
	if cfg.Emulator {
		// The emulator has no users: drop the login and workspace routes altogether.
		s.routes = slices.DeleteFunc(s.routes, func(rt route) bool { return rt.server })
	}
	if err := checkRoutes(s.routes); err != nil {
		return nil, err
	}
	doc, err := cachedOpenAPIDoc(s.routes, cfg.Emulator)
	if err != nil {
		return nil, fmt.Errorf("build openapi document: %w", err)
	}
	s.openapi = doc
	if s.bodySchemas, err = cachedBodySchemas(routesKey(s.routes, cfg.Emulator), doc); err != nil {
		return nil, fmt.Errorf("compile request schemas: %w", err)
	}
	if cfg.PublicURL != "" {
		base, err := NormalizePublicURL(cfg.PublicURL)
		if err != nil {
			return nil, fmt.Errorf("public URL: %w", err)
		}
		s.cfg.PublicURL = base
		s.openapiPublic = withServers(doc, base)
	}
	if cfg.JWKSURL != "" && !cfg.Emulator {
		if s.jwks, err = newJWKSVerifier(cfg.JWKSURL, cfg.Logger); err != nil {
			return nil, err
		}
	}
	if s.metrics = cfg.Metrics; s.metrics == nil {
		s.metrics = metrics.New()
	}
	s.metrics.SetQueue(func(ctx context.Context) (int, error) { return cfg.Store.ExecutionsQueued(ctx, maxQueueCount) })
	for _, rt := range s.routes {
		if (rt.emulator && !cfg.Emulator) || (rt.server && cfg.Emulator) {
			continue
		}
		s.mux.Handle(rt.pattern(), s.wrap(rt))
	}
	docs := docsui.Handler("agentplane API", "/openapi.json")
	s.mux.Handle("GET /docs", docs)
	s.mux.Handle("GET /docs/", docs)
	s.mux.Handle("GET /metrics", s.metrics.Handler())
	// Studio, the web console: static files only; it calls /api/v1 like any other client.
	studioUI := studio.New()
	s.mux.Handle("GET /studio", studioUI)
	s.mux.Handle("GET /studio/", studioUI)
	// A browser pointed at the server's address lands in Studio.
	s.mux.Handle("GET /{$}", http.RedirectHandler("/studio", http.StatusFound))
	s.mux.HandleFunc("/", s.notFound)
	s.handler = s.middleware(s.mux)
	return s, nil
}

// Handler is the server's whole HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// CloseStreams ends every open SSE stream (their runs go on); call it when shutting down so
// the HTTP server can drain. Safe to call more than once.
func (s *Server) CloseStreams() {
	s.closeOnce.Do(func() {
		close(s.streamsDone)
		s.keys.close()
		s.jwks.close()
	})
}

// OpenAPI returns the OpenAPI 3.1 document as JSON: with Config.PublicURL as its server when
// that is set, else without servers (GET /openapi.json adds the one the request reached).
func (s *Server) OpenAPI() []byte {
	if s.openapiPublic != nil {
		return s.openapiPublic
	}
	return s.openapi
}

// wrap turns a route's handler into an http.Handler that writes errors as the envelope.
func (s *Server) wrap(rt route) http.Handler {
	h := rt.h
	if rt.creates && !rt.turn {
		h = s.idempotent(h)
	}
	if rt.tagged() {
		// Cached answers are keyed by workspace and URL, so only routes whose answer depends on
		// nothing else are cached (not the caller-specific anyWorkspace routes).
		if s.cache != nil && rt.scope != "" && !rt.nocache && !rt.anyWorkspace {
			h = s.cache.wrap(h, func(r *http.Request) string { return s.workspace(r) + " " + r.URL.RequestURI() })
		} else {
			h = etagged(h)
		}
	}
	ids := pathIDNouns(rt.path)
	body := s.bodySchemas[rt.pattern()]
	if rt.itemwise {
		body = nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ar, err := s.authenticate(r, rt)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		r = ar
		if err := s.limitRate(w, r); err != nil {
			s.writeError(w, r, err)
			return
		}
		if err := domain.FirstErr(checkPathIDs(r, ids), checkQuery(r), checkParams(r, rt.params), checkBody(r, body)); err != nil {
			s.writeError(w, r, err)
			return
		}
		if err := h(w, r); err != nil {
			s.handlerError(w, r, err)
		}
	})
}

// handlerError answers a handler's error with the envelope, unless the handler has already
// started its response (an SSE stream): then no status can be sent any more, and writing an
// envelope would corrupt the stream, so the error is only logged; a client that left is
// routine and logged at debug level.
func (s *Server) handlerError(w http.ResponseWriter, r *http.Request, err error) {
	if sw, ok := w.(*statusWriter); !ok || sw.status == 0 {
		s.writeError(w, r, err)
		return
	}
	var gone *clientGoneError
	if errors.As(err, &gone) {
		s.log.DebugContext(r.Context(), "client left the stream", slog.String("request_id", requestID(r.Context())),
			slog.String("path", logPath(r)), slog.Any("error", gone.err))
		return
	}
	s.log.ErrorContext(r.Context(), "request failed after its response started", slog.String("request_id", requestID(r.Context())),
		slog.String("method", r.Method), slog.String("path", logPath(r)), slog.Any("error", err))
}

// notFound answers every path no route matches: 405 when another method would match, else 404.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "" && pattern != "/" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		s.writeError(w, r, errorf(http.StatusMethodNotAllowed, "method %s is not allowed on %s; allowed: %s", r.Method, r.URL.Path, strings.Join(allow, ", ")))
		return
	}
	s.writeError(w, r, errorf(http.StatusNotFound, "no route for %s %s", r.Method, r.URL.Path))
}

// workspace returns the workspace the request acts in: on the server its user's
// X-Workspace-ID or its API key's, in the emulator the one namespace.
func (s *Server) workspace(r *http.Request) string {
	if u := userOf(r); u != nil && u.workspaceID != "" {
		return u.workspaceID
	}
	if k := apiKeyOf(r); k != nil {
		return k.WorkspaceID
	}
	return s.cfg.WorkspaceID
}
