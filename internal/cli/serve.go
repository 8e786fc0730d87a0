package cli

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentplane/agentplane/internal/api"
	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/datasource"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/egress"
	"github.com/agentplane/agentplane/internal/eval"
	"github.com/agentplane/agentplane/internal/experiment"
	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/llm/simulated"
	"github.com/agentplane/agentplane/internal/mcpclient"
	"github.com/agentplane/agentplane/internal/metrics"
	"github.com/agentplane/agentplane/internal/modelhealth"
	"github.com/agentplane/agentplane/internal/ratelimit"
	"github.com/agentplane/agentplane/internal/retention"
	"github.com/agentplane/agentplane/internal/rollup"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/seed"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/triggers"
	"github.com/agentplane/agentplane/internal/vault"
	"github.com/agentplane/agentplane/internal/webhook"
)

// DefaultWorkspaceID is the workspace `serve` creates on an empty database.
const DefaultWorkspaceID = "2o0yqLDGdJdFRBTuhdfPNEZdAvI"

// DBOptions select and unlock the server's database: the flags shared by every command
// that opens it.
type DBOptions struct {
	dataDir, databaseURL, secretKey, secretKeyFile string
}

var dbEnv = map[string]string{
	"data-dir": "DATA_DIR", "database-url": "DATABASE_URL", "secret-key": "SECRET_KEY", "secret-key-file": "SECRET_KEY_FILE",
}

func (o *DBOptions) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.dataDir, "data-dir", "agentplane-data", "directory of the embedded SQLite database and generated key (DATA_DIR)")
	f.StringVar(&o.databaseURL, "database-url", "", "postgres:// URL; empty uses SQLite in --data-dir (DATABASE_URL)")
	f.StringVar(&o.secretKey, "secret-key", "", "base64 32-byte key that encrypts credentials at rest (SECRET_KEY)")
	f.StringVar(&o.secretKeyFile, "secret-key-file", "", "file holding the base64 secret key (SECRET_KEY_FILE); default <data-dir>/secret.key, created if missing")
}

// url is the store URL the options select.
func (o *DBOptions) url() (string, error) {
	if o.databaseURL != "" {
		if !strings.HasPrefix(o.databaseURL, "postgres://") && !strings.HasPrefix(o.databaseURL, "postgresql://") {
			return "", usageError{fmt.Errorf("invalid value for --database-url: must start with postgres:// or postgresql://")}
		}
		return o.databaseURL, nil
	}
	dir, err := filepath.Abs(o.dataDir)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "agentplane.db"), nil
}

// secrets loads the master key: --secret-key, else --secret-key-file, else <data-dir>/secret.key
// (created with a fresh random key on first start).
func (o *DBOptions) secrets() (*secretbox.Box, string, error) {
	if o.secretKey != "" {
		key, err := decodeKey(o.secretKey)
		if err != nil {
			return nil, "", usageError{fmt.Errorf("invalid value for --secret-key: %w", err)}
		}
		b, err := secretbox.New(key)
		return b, "--secret-key", err
	}
	path := o.secretKeyFile
	if path == "" {
		path = filepath.Join(o.dataDir, "secret.key")
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			if err := os.MkdirAll(o.dataDir, 0o700); err != nil {
				return nil, "", fmt.Errorf("create data directory: %w", err)
			}
			enc := base64.StdEncoding.EncodeToString(secretbox.RandomKey())
			if err := os.WriteFile(path, []byte(enc+"\n"), 0o600); err != nil {
				return nil, "", fmt.Errorf("write secret key: %w", err)
			}
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("read secret key file: %w", err)
	}
	key, err := decodeKey(strings.TrimSpace(string(raw)))
	if err != nil {
		return nil, "", fmt.Errorf("secret key file %s: %w", path, err)
	}
	b, err := secretbox.New(key)
	return b, path, err
}

func decodeKey(s string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(key) != secretbox.KeySize {
		return nil, fmt.Errorf("want the base64 encoding of %d bytes (e.g. `openssl rand -base64 32`)", secretbox.KeySize)
	}
	return key, nil
}

func serveCmd(env Env) *cobra.Command {
	var (
		db                DBOptions
		host, level, cors string
		jwksURL           string
		port, workers     int
		grace             time.Duration
		limits            Limits
		trustedProxies    string
		models            string
		publicURL         string
		redisURL          string
		denyPrivateEgress bool
		leases            Leases
		allowStdioMCP     bool
		assetOpts         AssetOptions
		retentionOpts     RetentionOptions
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the server on an embedded SQLite file (default) or PostgreSQL",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			vars := map[string]string{"host": "HOST", "port": "PORT", "log-level": "LOG_LEVEL", "cors-origins": "CORS_ORIGINS", "workers": "WORKERS", "shutdown-timeout": "SHUTDOWN_TIMEOUT",
				"rate-limit": "RATE_LIMIT", "rate-burst": "RATE_BURST", "max-agents": "MAX_AGENTS",
				"max-executions-per-month": "MAX_EXECUTIONS_PER_MONTH", "max-concurrent-executions": "MAX_CONCURRENT_EXECUTIONS",
				"trusted-proxies": "TRUSTED_PROXIES", "jwks-url": "JWKS_URL", "models": "MODELS", "public-url": "PUBLIC_URL", "redis-url": "REDIS_URL", "deny-private-egress": "DENY_PRIVATE_EGRESS",
				"lease-timeout": "LEASE_TIMEOUT", "heartbeat-interval": "HEARTBEAT_INTERVAL", "allow-stdio-mcp": "ALLOW_STDIO_MCP",
				"assets-quota-mb": "ASSETS_QUOTA_MB", "assets-dir": "ASSETS_DIR"}
			for k, v := range dbEnv {
				vars[k] = v
			}
			for k, v := range retentionEnv {
				vars[k] = v
			}
			if err := bindEnv(cmd.Flags(), env, vars); err != nil {
				return err
			}
			lvl, err := parseLevel(level)
			if err != nil {
				return err
			}
			if err := checkPort(port); err != nil {
				return err
			}
			if workers < 1 || workers > 1024 {
				return usageError{fmt.Errorf("invalid value %d for --workers: must be 1 to 1024", workers)}
			}
			if grace < 0 {
				return usageError{fmt.Errorf("invalid value %s for --shutdown-timeout: must not be negative", grace)}
			}
			if err := limits.validate(); err != nil {
				return err
			}
			if !cmd.Flags().Changed("heartbeat-interval") {
				// Only the lease was set: the heartbeat follows it.
				leases.Heartbeat = min(runtime.DefaultHeartbeatInterval, leases.Timeout/3)
			}
			if err := leases.Validate(); err != nil {
				return err
			}
			trusted := splitList(trustedProxies)
			if _, err := auth.ParseIPAllowlist(trusted); err != nil {
				return usageError{fmt.Errorf("invalid value for --trusted-proxies: %v", err)}
			}
			if err := checkJWKSURL(jwksURL); err != nil {
				return err
			}
			if err := checkPublicURL(publicURL); err != nil {
				return err
			}
			if err := checkRedisURL(redisURL); err != nil {
				return err
			}
			if err := assetOpts.validate(); err != nil {
				return err
			}
			if err := retentionOpts.Validate(); err != nil {
				return err
			}
			if models != ModelsReal && models != ModelsSimulated {
				return usageError{fmt.Errorf("invalid value %q for --models: must be real or simulated", models)}
			}
			return runServe(cmd.Context(), cmd.ErrOrStderr(), db, host, port, workers, grace, lvl, ServerConfig{
				CORSOrigins: splitList(cors), Limits: limits, TrustedProxies: trusted, JWKSURL: jwksURL, Models: models, PublicURL: publicURL,
				RedisURL: redisURL, Leases: leases, DenyPrivateEgress: denyPrivateEgress, AllowStdioMCP: allowStdioMCP,
				Assets: assetOpts, Retention: retentionOpts})
		},
	}
	db.flags(cmd)
	f := cmd.Flags()
	f.StringVar(&host, "host", "0.0.0.0", "interface to listen on (HOST)")
	f.IntVar(&port, "port", 8080, "port to listen on (PORT); 0 picks a free one")
	f.StringVar(&level, "log-level", "info", "debug, info, warn or error (LOG_LEVEL)")
	f.StringVar(&cors, "cors-origins", "", "comma-separated origins allowed by CORS, or * (CORS_ORIGINS)")
	f.IntVar(&workers, "workers", 16, "how many async executions run at once (WORKERS)")
	f.DurationVar(&grace, "shutdown-timeout", 10*time.Second, "on SIGTERM, how long requests and runs may finish; then runs that never reached a model call are queued again for another server and the rest fail as interrupted (SHUTDOWN_TIMEOUT)")
	leases.flags(cmd)
	f.StringVar(&jwksURL, "jwks-url", "", "http(s) URL of an identity provider's JWKS; bearer tokens it signs (RS256/ES256) log in the user of their email claim (JWKS_URL)")
	limits.flags(cmd)
	f.StringVar(&trustedProxies, "trusted-proxies", "", "comma-separated proxy addresses or CIDR ranges whose X-Forwarded-For is believed (TRUSTED_PROXIES)")
	f.StringVar(&publicURL, "public-url", "", publicURLUsage)
	f.BoolVar(&denyPrivateEgress, "deny-private-egress", false, "refuse outbound connections (model providers, MCP servers, data sources, completion webhooks) to loopback, private and link-local addresses, checked when connecting (DENY_PRIVATE_EGRESS)")
	f.StringVar(&redisURL, "redis-url", "", "redis:// URL of a Redis that holds the rate limit buckets of every node (REDIS_URL); default: PostgreSQL with --database-url, else this process")
	f.BoolVar(&allowStdioMCP, "allow-stdio-mcp", false, "let MCP tools use the stdio transport: a command this server starts for the runs that call it (ALLOW_STDIO_MCP)")
	assetOpts.flags(cmd)
	retentionOpts.flags(cmd)
	f.StringVar(&models, "models", ModelsReal, "real: model calls go to each workspace's provider credentials; simulated: every call is answered by the simulated model, for demos and staging (MODELS)")
	return cmd
}

// publicURLUsage is the help text of --public-url (serve and emulator).
const publicURLUsage = "absolute http(s) base URL clients reach the API at, e.g. behind a proxy; /openapi.json lists it as the server (PUBLIC_URL); default: each request's scheme and host"

// checkPublicURL accepts an empty --public-url or what api.NormalizePublicURL accepts.
func checkPublicURL(s string) error {
	if s == "" {
		return nil
	}
	if _, err := api.NormalizePublicURL(s); err != nil {
		return usageError{fmt.Errorf("invalid value for --public-url: %v", err)}
	}
	return nil
}

// checkRedisURL accepts an empty --redis-url or a redis://, rediss:// or unix:// URL.
func checkRedisURL(s string) error {
	if s == "" {
		return nil
	}
	for _, scheme := range []string{"redis://", "rediss://", "unix://"} {
		if strings.HasPrefix(s, scheme) {
			return nil
		}
	}
	return usageError{fmt.Errorf("invalid value for --redis-url: must start with redis://, rediss:// or unix://")}
}

// checkJWKSURL accepts an empty --jwks-url or an absolute http or https URL.
func checkJWKSURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageError{fmt.Errorf("invalid value %q for --jwks-url: must be an http:// or https:// URL", s)}
	}
	return nil
}

// openServerStore opens (and migrates) the server's database and makes sure the model
// catalog and the default workspace exist (created keeping history retentionDays).
func openServerStore(ctx context.Context, stderr io.Writer, db DBOptions, retentionDays int) (*store.Store, *secretbox.Box, error) {
	url, err := db.url()
	if err != nil {
		return nil, nil, err
	}
	box, _, err := db.secrets()
	if err != nil {
		return nil, nil, err
	}
	if db.databaseURL == "" {
		// Open does this too; here what was tightened is said.
		fixed, err := domain.SecureSQLiteFiles(url)
		if err != nil {
			return nil, nil, err
		}
		for _, f := range fixed {
			fmt.Fprintf(stderr, "agentplane: made private: %s\n", f)
		}
	}
	st, err := store.Open(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	if st.Dialect() == store.SQLite {
		fmt.Fprintf(stderr, "agentplane: database %s\n", url)
	}
	err = st.InTx(ctx, func(tx *store.Store) error {
		if _, err := tx.WorkspaceEnsure(ctx, &domain.Workspace{ID: DefaultWorkspaceID, Name: "Default", Slug: "default", RetentionDays: retentionDays}); err != nil {
			return err
		}
		return seed.LoadCatalog(ctx, tx)
	})
	if err == nil {
		// Masks are computed when a value is written: bring those of older versions'
		// rule in line (it shows fewer characters now).
		_, err = vault.CredentialMasksRefresh(ctx, st, box)
	}
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, box, nil
}

func runServe(ctx context.Context, stderr io.Writer, db DBOptions, host string, port, workers int, grace time.Duration, level slogLevel, c ServerConfig) error {
	log := newLogger(stderr, level)
	c.DB, c.Workers = db, workers
	ln, err := listen(host, port)
	if err != nil {
		return err
	}
	srv, err := NewServer(ctx, log, stderr, c)
	if err != nil {
		ln.Close()
		return err
	}
	// One --shutdown-timeout for the whole drain: from the signal on, the node claims no more
	// runs, and requests and runs share the time left.
	var began atomic.Int64
	onShutdown := func() {
		began.CompareAndSwap(0, time.Now().UnixNano())
		srv.API.CloseStreams()
		srv.Engine.StopClaiming()
	}
	err = serveHTTP(ctx, log, stderr, ln, srv.Handler, "server", onShutdown, grace, firstRunHint(ctx, srv.Store, c.Models))
	began.CompareAndSwap(0, time.Now().UnixNano())
	deadline := time.Unix(0, began.Load()).Add(grace)
	stopCtx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	return errors.Join(err, srv.Close(stopCtx))
}

// firstRunHint is the line serve prints under its address when runs cannot work yet: real
// models and no credential in the default workspace. "" otherwise.
func firstRunHint(ctx context.Context, st *store.Store, models string) string {
	if models == ModelsSimulated {
		return ""
	}
	creds, _, err := st.CredentialList(ctx, DefaultWorkspaceID, domain.CredentialFilter{}, domain.Page{Page: 1, Limit: 1})
	if err != nil || len(creds) > 0 {
		return ""
	}
	return "  No model provider credential yet: add one (Studio's Credentials page, agentplane credentials add, or POST /api/v1/credentials),\n" +
		"  or restart with --models simulated for a demo whose every model call is simulated."
}

// ServerConfig is what NewServer needs besides a logger.
type ServerConfig struct {
	DB          DBOptions
	Workers     int
	CORSOrigins []string
	// Limits are the per-key rate limit and the per-workspace plan; the zero value is unlimited.
	Limits Limits
	// TrustedProxies are the proxies whose X-Forwarded-For is believed (addresses or CIDR).
	TrustedProxies []string
	// JWKSURL is the identity provider's JWKS (--jwks-url); empty accepts only login tokens.
	JWKSURL string
	// PublicURL is the base URL /openapi.json lists as its server (--public-url); empty uses
	// each request's scheme and host.
	PublicURL string
	// Models is ModelsReal (the default when empty) or ModelsSimulated (--models).
	Models string
	// ProviderClient carries calls to model providers; nil uses a shared pooled client.
	ProviderClient *http.Client
	// DenyPrivateEgress refuses outbound connections to non-public addresses
	// (--deny-private-egress): model providers, MCP servers, data sources and webhooks.
	DenyPrivateEgress bool
	// RedisURL, when set, keeps the rate limit buckets in that Redis (--redis-url); else they
	// are in PostgreSQL (shared by every node) or, on SQLite, in this process.
	RedisURL string
	// Leases are the run leases (--lease-timeout, --heartbeat-interval); zero values take
	// the defaults.
	Leases Leases
	// AllowStdioMCP lets MCP tools use the stdio transport (--allow-stdio-mcp): saving one
	// is a 422 without it, and runs never start one.
	AllowStdioMCP bool
	// Assets are where the assets of runs keep their bytes and how much each workspace may
	// store (--assets-dir, --assets-quota-mb).
	Assets AssetOptions
	// Retention is what workspaces keep and how often the leader purges the rest
	// (--retention-days, --max-retention-days, --retention-interval); zero values keep
	// everything, purging every minute.
	Retention RetentionOptions
	// MCPDialCheck, when set, vets the address of every connection to an MCP server before
	// it is opened (an egress policy); an error refuses it.
	MCPDialCheck func(ctx context.Context, network, address string) error
}

// The values of --models.
const (
	ModelsReal      = "real"
	ModelsSimulated = "simulated"
)

// Leases are how long a server owns the runs it executes without renewing them, and how
// often it renews them: when a server stops (crash, kill -9), another takes its runs over
// once their lease expired.
type Leases struct {
	// Timeout is a run's lease (--lease-timeout); Heartbeat how often leases are renewed
	// (--heartbeat-interval). Zero values take the defaults.
	Timeout, Heartbeat time.Duration
}

func (l *Leases) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.DurationVar(&l.Timeout, "lease-timeout", runtime.DefaultLeaseTimeout, "how long a run stays owned by a server that stopped renewing it; then another server takes it over: queued again if it never reached a model call, else failed as interrupted (LEASE_TIMEOUT)")
	f.DurationVar(&l.Heartbeat, "heartbeat-interval", runtime.DefaultHeartbeatInterval, "how often a server renews the leases of its runs; at most a third of --lease-timeout, which it follows when not set (HEARTBEAT_INTERVAL)")
}

// Validate rejects leases a heartbeat could not keep, naming the flag.
func (l *Leases) Validate() error {
	if l.Timeout < 100*time.Millisecond {
		return usageError{fmt.Errorf("invalid value %s for --lease-timeout: must be at least 100ms", l.Timeout)}
	}
	if l.Heartbeat <= 0 {
		return usageError{fmt.Errorf("invalid value %s for --heartbeat-interval: must be positive", l.Heartbeat)}
	}
	if 3*l.Heartbeat > l.Timeout {
		return usageError{fmt.Errorf("invalid value %s for --heartbeat-interval: must be at most a third of --lease-timeout (%s), so that a missed heartbeat does not lose a lease", l.Heartbeat, l.Timeout)}
	}
	return nil
}

// Limits are serve's rate and plan limits.
type Limits struct {
	// RateLimit is requests per second per API key (0 disables); RateBurst the bucket size.
	RateLimit float64
	RateBurst int
	// Plan bounds each workspace.
	Plan api.Plan
}

func (l *Limits) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.Float64Var(&l.RateLimit, "rate-limit", 50, "requests per second allowed per API key, per signed-in user and per trigger hook; 0 disables (RATE_LIMIT)")
	f.IntVar(&l.RateBurst, "rate-burst", 100, "requests per API key, user or trigger hook allowed at once above --rate-limit (RATE_BURST)")
	f.IntVar(&l.Plan.MaxAgents, "max-agents", 0, "agents per workspace; 0 is unlimited (MAX_AGENTS)")
	f.IntVar(&l.Plan.MaxExecutionsPerMonth, "max-executions-per-month", 0, "executions per workspace per calendar month (UTC); 0 is unlimited (MAX_EXECUTIONS_PER_MONTH)")
	f.IntVar(&l.Plan.MaxConcurrentExecutions, "max-concurrent-executions", 0, "pending, running or awaiting executions per workspace; 0 is unlimited (MAX_CONCURRENT_EXECUTIONS)")
}

// validate rejects negative (or non-finite) limits, naming the flag.
func (l *Limits) validate() error {
	if l.RateLimit < 0 || math.IsNaN(l.RateLimit) || math.IsInf(l.RateLimit, 0) {
		return usageError{fmt.Errorf("invalid value %v for --rate-limit: must be a finite number, 0 or more", l.RateLimit)}
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"--rate-burst", l.RateBurst}, {"--max-agents", l.Plan.MaxAgents},
		{"--max-executions-per-month", l.Plan.MaxExecutionsPerMonth}, {"--max-concurrent-executions", l.Plan.MaxConcurrentExecutions}} {
		if c.v < 0 {
			return usageError{fmt.Errorf("invalid value %d for %s: must not be negative", c.v, c.name)}
		}
	}
	if l.RateLimit > 0 && l.RateBurst < 1 {
		return usageError{fmt.Errorf("invalid value %d for --rate-burst: must be at least 1 when --rate-limit is set", l.RateBurst)}
	}
	return nil
}

// ServerDB selects the server's database: a data directory for SQLite, or a PostgreSQL URL.
func ServerDB(dataDir, databaseURL string) DBOptions {
	return DBOptions{dataDir: dataDir, databaseURL: databaseURL}
}

// Server is a ready server: the API over its database and the engine running executions.
type Server struct {
	Handler http.Handler
	Store   *store.Store
	API     *api.Server
	Engine  *runtime.Engine
	// BootstrapKey is the raw key created on first start (also printed on stderr); "" when
	// the database had keys already.
	BootstrapKey string
	redis        *ratelimit.Redis // nil without --redis-url
	sources      *datasource.Live
	mcp          *mcpclient.Client // the MCP connections of runs and refreshes
	// schedules fires the ticks of schedule triggers (each exactly once across the nodes).
	schedules *triggers.Scheduler
	// experiments drives the experiments this node holds the lease of.
	experiments *experiment.Runner
	webhooks    *webhook.Deliverer // completion webhooks' outbox
	judges      *eval.Online       // online evaluation: scores finished runs by the evaluation rules
	purger      *retention.Purger  // the leader's retention job
	packer      *rollup.Packer     // the leader's packing of the trace rollups' bins
}

// Close stops the engine (runs still going when ctx ends are failed) and the database.
func (s *Server) Close(ctx context.Context) error {
	s.API.CloseStreams()
	s.schedules.Stop()
	s.experiments.Stop()
	s.purger.Stop()
	s.packer.Stop()
	s.judges.Stop(ctx)
	s.Engine.Stop(ctx)
	s.API.WaitReplies(ctx)
	s.webhooks.Stop(ctx)
	s.mcp.Close()
	err := s.sources.Close()
	if s.redis != nil {
		err = errors.Join(err, s.redis.Close())
	}
	return errors.Join(err, s.Store.Close())
}

// NewServer opens the server's database (migrating it, making sure the default workspace
// and the model catalog exist) and starts its engine. Benchmarks and tests use it to run
// `serve` in-process.
func NewServer(ctx context.Context, log *slog.Logger, stderr io.Writer, c ServerConfig) (*Server, error) {
	st, box, err := openServerStore(ctx, stderr, c.DB, c.Retention.Days)
	if err != nil {
		return nil, err
	}
	bootstrap, err := bootstrapKey(ctx, st, stderr)
	if err != nil {
		st.Close()
		return nil, err
	}
	jwtSecret, err := box.Derive("agentplane jwt v1")
	if err != nil {
		st.Close()
		return nil, err
	}
	guard := egress.Guard{DenyPrivate: c.DenyPrivateEgress}
	providerClient := c.ProviderClient
	if providerClient == nil && guard.DenyPrivate {
		providerClient = &http.Client{Transport: guard.Transport(llm.NewTransport())}
	}
	credentials := &runtime.CredentialRouter{Store: st, Secrets: box, Simulated: simulated.New(), HTTPClient: providerClient}
	var router runtime.ModelRouter = credentials
	mcpCheck := c.MCPDialCheck
	if mcpCheck == nil && guard.DenyPrivate {
		mcpCheck = guard.Check
	}
	mcp := mcpclient.New(mcpclient.Options{AllowStdio: c.AllowStdioMCP, CheckDial: mcpCheck, Version: Version})
	var tools runtime.ToolServers = &runtime.MCPServers{Store: st, Secrets: box, Client: mcp}
	if c.Models == ModelsSimulated {
		// Simulated models make tool arguments up: their calls are simulated too.
		router, tools = runtime.SimulatedRouter{Model: simulated.New()}, runtime.SimulatedTools{}
	}
	if c.Models == ModelsSimulated {
		log.Warn("every model call is answered by the simulated model (--models simulated)", "models", ModelsSimulated)
	} else {
		log.Info("model calls go to the providers of each workspace's credentials", "models", ModelsReal)
	}
	if c.AllowStdioMCP {
		log.Warn("MCP tools may start commands on this host (--allow-stdio-mcp)")
	}
	// Rate limits hold across nodes: in Redis when given, else in PostgreSQL; a SQLite file
	// has one server, whose buckets stay in memory.
	var shared ratelimit.Shared
	var rdb *ratelimit.Redis
	switch {
	case c.RedisURL != "":
		if rdb, err = ratelimit.NewRedis(ctx, c.RedisURL); err != nil {
			st.Close()
			return nil, err
		}
		shared = rdb
		log.Info("rate limits are shared through Redis")
	case st.Dialect() == store.Postgres:
		shared = ratelimit.NewDatabase(st)
		log.Info("rate limits are shared through PostgreSQL")
	}
	// Credential cool-downs and model circuits are shared the same way: in Redis when
	// given, else in the database.
	var health modelhealth.Shared = modelhealth.NewDatabase(st)
	if rdb != nil {
		health = modelhealth.NewRedis(rdb.Client(), "agentplane:health:")
	}
	credentials.Health = health
	m := metrics.New()
	assetService, err := c.Assets.service(ctx, log, st, c.DB.dataDir)
	if err != nil {
		if rdb != nil {
			rdb.Close()
		}
		st.Close()
		return nil, err
	}
	// Data sources connect to the workspaces' own databases and APIs; a sqlite data source may
	// not read the server's data directory (its database and secret key) or its key file.
	var deny []string
	for _, p := range []string{c.DB.dataDir, c.DB.secretKeyFile, c.Assets.Dir} {
		if abs, err := filepath.Abs(p); p != "" && err == nil {
			deny = append(deny, abs)
		}
	}
	dsConfig := datasource.LiveConfig{Store: st, Secrets: box, DenyPaths: deny}
	if guard.DenyPrivate {
		dsConfig.HTTPClient = &http.Client{Transport: guard.Transport(nil)}
		dsConfig.Dial = guard.DialContext
		log.Info("egress to private, loopback and link-local addresses is denied (--deny-private-egress)")
	}
	sources := datasource.NewLive(dsConfig)
	// Runs query the same data sources through config.data_sources tools.
	eng := runtime.New(runtime.Config{Store: runtime.SQLStore{Store: st}, Router: router, Tools: tools, Logger: log, Workers: c.Workers,
		LeaseTimeout: c.Leases.Timeout, HeartbeatInterval: c.Leases.Heartbeat, PostgresURL: c.DB.databaseURL, Metrics: m,
		DataSources: sources, Assets: assetService, Circuits: &modelhealth.Circuits{Shared: health}})
	replier := &triggers.Replier{Store: st, Secrets: box, Client: triggerReplyClient(guard), Logger: log}
	var srv *api.Server
	runner := experiment.NewRunner(experiment.Config{Store: st, Engine: eng, Logger: log, Lease: c.Leases.Timeout,
		BeforeCreate: func(ctx context.Context, tx *store.Store, ws string) error { return srv.ExecutionLimits(ctx, tx, ws) }})
	srv, err = api.New(api.Config{Store: st, Logger: log, Secrets: box, WorkspaceID: DefaultWorkspaceID, CORSOrigins: c.CORSOrigins, Version: Version, Engine: eng, DataSources: sources,
		RateLimit: c.Limits.RateLimit, RateBurst: c.Limits.RateBurst, RateShared: shared, Plan: c.Limits.Plan, Retention: c.Retention.Retention, JWTSecret: jwtSecret,
		TrustedProxies: c.TrustedProxies, JWKSURL: c.JWKSURL, PublicURL: c.PublicURL, AllowStdioMCP: c.AllowStdioMCP, Metrics: m,
		Replier: replier, Experiments: runner})
	// Completion webhooks: the outbox is written as runs end; every node sends what is due.
	hooks := webhook.New(webhook.Config{Store: st, Secrets: box, Logger: log, Node: eng.Node(), Guard: guard,
		TriggerWebhook: webhook.StoreTriggerWebhook(box, log)})
	// Online evaluation: judgments are recorded as runs end; every node judges what is due.
	judges := eval.NewOnline(eval.OnlineConfig{Store: st, Judge: eng.Judge, Logger: log, Node: eng.Node(),
		Lease: c.Leases.Timeout, Heartbeat: c.Leases.Heartbeat})
	if err == nil {
		err = eng.Start(ctx)
	}
	if err != nil {
		hooks.Stop(ctx)
		judges.Stop(ctx)
		if rdb != nil {
			rdb.Close()
		}
		sources.Close()
		st.Close()
		return nil, err
	}
	schedules := triggers.NewScheduler(triggers.SchedulerConfig{Store: st, Engine: eng, Logger: log, BeforeCreate: srv.ExecutionLimits, Replier: replier})
	schedules.Start(ctx)
	runner.Start(ctx)
	hooks.Start(ctx)
	judges.Start(ctx)
	purger := c.Retention.purger(st, eng, assetService, log)
	purger.Start(ctx)
	packer := rollup.New(rollup.Config{Store: st, Leader: eng.Leading, Logger: log})
	packer.Start(ctx)
	return &Server{Handler: srv.Handler(), Store: st, API: srv, Engine: eng, BootstrapKey: bootstrap, redis: rdb, sources: sources, mcp: mcp,
		schedules: schedules, webhooks: hooks, judges: judges, experiments: runner, purger: purger, packer: packer}, nil
}

// triggerReplyClient is the client chat platform replies go out with: bounded, and under
// --deny-private-egress refused to non-public addresses like every other outbound call.
func triggerReplyClient(guard egress.Guard) *http.Client {
	c := &http.Client{Timeout: 30 * time.Second}
	if guard.DenyPrivate {
		c.Transport = guard.Transport(nil)
	}
	return c
}

func migrateCmd(env Env) *cobra.Command {
	var db DBOptions
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply pending database migrations and exit",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := bindEnv(cmd.Flags(), env, dbEnv); err != nil {
				return err
			}
			st, _, err := openServerStore(cmd.Context(), cmd.ErrOrStderr(), db, 0)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "migrations applied")
			return st.Close()
		},
	}
	db.flags(cmd)
	return cmd
}
