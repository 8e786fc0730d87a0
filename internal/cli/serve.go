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
	"time"

	"github.com/spf13/cobra"

	"github.com/agentplane/agentplane/internal/api"
	"github.com/agentplane/agentplane/internal/auth"
	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/seed"
	"github.com/agentplane/agentplane/internal/store"
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
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the server on an embedded SQLite file (default) or PostgreSQL",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			vars := map[string]string{"host": "HOST", "port": "PORT", "log-level": "LOG_LEVEL", "cors-origins": "CORS_ORIGINS", "workers": "WORKERS", "shutdown-timeout": "SHUTDOWN_TIMEOUT",
				"rate-limit": "RATE_LIMIT", "rate-burst": "RATE_BURST", "max-agents": "MAX_AGENTS",
				"max-executions-per-month": "MAX_EXECUTIONS_PER_MONTH", "max-concurrent-executions": "MAX_CONCURRENT_EXECUTIONS",
				"trusted-proxies": "TRUSTED_PROXIES", "jwks-url": "JWKS_URL"}
			for k, v := range dbEnv {
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
			trusted := splitList(trustedProxies)
			if _, err := auth.ParseIPAllowlist(trusted); err != nil {
				return usageError{fmt.Errorf("invalid value for --trusted-proxies: %v", err)}
			}
			if err := checkJWKSURL(jwksURL); err != nil {
				return err
			}
			return runServe(cmd.Context(), cmd.ErrOrStderr(), db, host, port, workers, grace, lvl, splitList(cors), limits, trusted, jwksURL)
		},
	}
	db.flags(cmd)
	f := cmd.Flags()
	f.StringVar(&host, "host", "0.0.0.0", "interface to listen on (HOST)")
	f.IntVar(&port, "port", 8080, "port to listen on (PORT); 0 picks a free one")
	f.StringVar(&level, "log-level", "info", "debug, info, warn or error (LOG_LEVEL)")
	f.StringVar(&cors, "cors-origins", "", "comma-separated origins allowed by CORS, or * (CORS_ORIGINS)")
	f.IntVar(&workers, "workers", 16, "how many async executions run at once (WORKERS)")
	f.DurationVar(&grace, "shutdown-timeout", 10*time.Second, "on SIGTERM, how long requests and runs may finish before runs are failed (SHUTDOWN_TIMEOUT)")
	f.StringVar(&jwksURL, "jwks-url", "", "http(s) URL of an identity provider's JWKS; bearer tokens it signs (RS256/ES256) log in the user of their email claim (JWKS_URL)")
	limits.flags(cmd)
	f.StringVar(&trustedProxies, "trusted-proxies", "", "comma-separated proxy addresses or CIDR ranges whose X-Forwarded-For is believed (TRUSTED_PROXIES)")
	return cmd
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
// catalog and the default workspace exist.
func openServerStore(ctx context.Context, stderr io.Writer, db DBOptions) (*store.Store, *secretbox.Box, error) {
	url, err := db.url()
	if err != nil {
		return nil, nil, err
	}
	box, _, err := db.secrets()
	if err != nil {
		return nil, nil, err
	}
	st, err := store.Open(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	if st.Dialect() == store.SQLite {
		fmt.Fprintf(stderr, "agentplane: database %s\n", url)
	}
	err = st.InTx(ctx, func(tx *store.Store) error {
		if _, err := tx.WorkspaceEnsure(ctx, &store.Workspace{ID: DefaultWorkspaceID, Name: "Default", Slug: "default"}); err != nil {
			return err
		}
		return seed.LoadCatalog(ctx, tx)
	})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, box, nil
}

func runServe(ctx context.Context, stderr io.Writer, db DBOptions, host string, port, workers int, grace time.Duration, level slogLevel, cors []string, limits Limits, trusted []string, jwksURL string) error {
	log := newLogger(stderr, level)
	srv, err := NewServer(ctx, log, stderr, ServerConfig{DB: db, Workers: workers, CORSOrigins: cors, Limits: limits, TrustedProxies: trusted, JWKSURL: jwksURL})
	if err != nil {
		return err
	}
	err = serveHTTP(ctx, log, stderr, host, port, srv.Handler, "server", srv.API.CloseStreams, grace)
	stopCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	return errors.Join(err, srv.Close(stopCtx))
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
	f.Float64Var(&l.RateLimit, "rate-limit", 50, "requests per second allowed per API key; 0 disables (RATE_LIMIT)")
	f.IntVar(&l.RateBurst, "rate-burst", 100, "requests per API key allowed at once above --rate-limit (RATE_BURST)")
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
}

// Close stops the engine (runs still going when ctx ends are failed) and the database.
func (s *Server) Close(ctx context.Context) error {
	s.API.CloseStreams()
	s.Engine.Stop(ctx)
	return s.Store.Close()
}

// NewServer opens the server's database (migrating it, making sure the default workspace
// and the model catalog exist) and starts its engine. Benchmarks and tests use it to run
// `serve` in-process.
func NewServer(ctx context.Context, log *slog.Logger, stderr io.Writer, c ServerConfig) (*Server, error) {
	st, box, err := openServerStore(ctx, stderr, c.DB)
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
	eng := runtime.New(runtime.Config{Store: st, Provider: llm.NewSimulated(), Logger: log, Workers: c.Workers})
	srv, err := api.New(api.Config{Store: st, Logger: log, Secrets: box, WorkspaceID: DefaultWorkspaceID, CORSOrigins: c.CORSOrigins, Version: Version, Engine: eng,
		RateLimit: c.Limits.RateLimit, RateBurst: c.Limits.RateBurst, Plan: c.Limits.Plan, JWTSecret: jwtSecret,
		TrustedProxies: c.TrustedProxies, JWKSURL: c.JWKSURL})
	if err == nil {
		err = eng.Start(ctx)
	}
	if err != nil {
		st.Close()
		return nil, err
	}
	return &Server{Handler: srv.Handler(), Store: st, API: srv, Engine: eng, BootstrapKey: bootstrap}, nil
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
			st, _, err := openServerStore(cmd.Context(), cmd.ErrOrStderr(), db)
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
