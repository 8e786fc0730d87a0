package datasource

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/stdlib"
	"modernc.org/sqlite"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/secretbox"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/vault"
)

// Pool bounds: each data source gets its own small pool, whose idle connections close after
// a while; a pool unused for poolIdle is closed altogether.
const (
	poolMaxOpen     = 4
	poolMaxIdle     = 2
	poolConnIdle    = time.Minute
	poolConnMaxLife = 30 * time.Minute
	poolIdle        = 10 * time.Minute
)

// LiveConfig is what a Live executor needs.
type LiveConfig struct {
	Store   *store.Store
	Secrets *secretbox.Box
	// HTTPClient sends the requests of http data sources; nil uses a client of its own.
	// Redirects are never followed, whatever the client says.
	HTTPClient *http.Client
	// DenyPaths are directories a sqlite data source may not read (the server's data
	// directory, which holds its own database and secret key).
	DenyPaths []string
	// Dial opens the network connections of SQL data sources; nil dials directly. The
	// server's egress policy (--deny-private-egress) is applied through it.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// Live runs queries against the real data sources: one bounded connection pool per SQL data
// source, keyed by its active version and its credential (id and value), so that promoting a
// version or changing the credential opens a new pool and closes the old one once its
// queries are done.
type Live struct {
	store *store.Store
	box   *secretbox.Box
	http  *http.Client
	deny  []string
	dial  func(ctx context.Context, network, address string) (net.Conn, error)

	mu     sync.Mutex
	pools  map[string]*pool // by workspace and data source id
	closed bool
}

// pool is the connection pool of one data source version and credential.
type pool struct {
	*SQLDB
	key      string // hash of version id, credential id and connection string
	users    Users  // the queries using it; replaced or evicted, it closes after the last
	lastUsed time.Time
}

// NewLive returns an executor that connects to the data sources themselves.
func NewLive(c LiveConfig) *Live {
	hc := http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	if c.HTTPClient != nil {
		hc = *c.HTTPClient
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Live{store: c.Store, box: c.Secrets, http: &hc, deny: c.DenyPaths, dial: c.Dial, pools: map[string]*pool{}}
}

// Query runs req against the data source (see Executor).
func (l *Live) Query(ctx context.Context, ws, id string, req Request) (*Result, error) {
	ds, cfg, err := Load(ctx, l.store, ws, id)
	if err != nil {
		return nil, err
	}
	bound, err := Prepare(cfg, req)
	if err != nil {
		return nil, err
	}
	if cfg.Type == "http" {
		return l.queryHTTP(ctx, ds, cfg, req, bound)
	}
	p, err := l.acquire(ctx, ds, cfg)
	if err != nil {
		return nil, naming(ds, err)
	}
	defer l.release(p)
	res, err := p.Run(ctx, cfg, req, bound)
	return res, naming(ds, err)
}

// Describe lists the data source's tables and columns from its catalog (see Executor).
func (l *Live) Describe(ctx context.Context, ws, id string) ([]Table, error) {
	ds, cfg, err := Load(ctx, l.store, ws, id)
	if err != nil {
		return nil, err
	}
	if cfg.Type == "http" {
		return []Table{}, nil
	}
	p, err := l.acquire(ctx, ds, cfg)
	if err != nil {
		return nil, naming(ds, err)
	}
	defer l.release(p)
	tables, err := p.Describe(ctx, cfg)
	return tables, naming(ds, err)
}

// naming puts the data source's id in front of a *SourceError that does not name it.
func naming(ds *domain.DataSource, err error) error {
	var se *SourceError
	if errors.As(err, &se) && !strings.Contains(se.Message, ds.ID) {
		return &SourceError{Message: "data source " + ds.ID + ": " + se.Message, Unreachable: se.Unreachable}
	}
	return err
}

// Close closes every pool; queries still running on them fail.
func (l *Live) Close() error {
	l.mu.Lock()
	pools := l.pools
	l.pools, l.closed = map[string]*pool{}, true
	l.mu.Unlock()
	l.http.CloseIdleConnections()
	var errs []error
	for _, p := range pools {
		errs = append(errs, p.db.Close())
	}
	return errors.Join(errs...)
}

// secret reads the data source's credential value: "" without a credential. SQL sources
// take only database_url credentials.
func (l *Live) secret(ctx context.Context, ds *domain.DataSource) (*domain.Credential, string, error) {
	if ds.CredentialID == nil {
		return nil, "", nil
	}
	c, v, err := vault.CredentialForRun(ctx, l.store, ds.WorkspaceID, *ds.CredentialID, "", l.box)
	var nf *store.NotFoundError
	if errors.As(err, &nf) {
		return nil, "", sourceErr("the credential %s of data source %s no longer exists; attach another with PATCH", *ds.CredentialID, ds.ID)
	}
	if err != nil {
		return nil, "", err
	}
	if ds.Type != "http" && c.Type != "database_url" {
		return nil, "", sourceErr("the credential %s of data source %s is a %s credential; a %s data source needs a database_url credential", c.ID, ds.ID, c.Type, ds.Type)
	}
	return c, v, nil
}

// acquire returns the data source's pool for its current version and credential, opening
// it (and retiring the previous one) when either changed.
func (l *Live) acquire(ctx context.Context, ds *domain.DataSource, cfg *Config) (*pool, error) {
	_, secret, err := l.secret(ctx, ds)
	if err != nil {
		return nil, err
	}
	opener, conn, err := l.opener(ds.Type, secret, cfg)
	if err != nil {
		return nil, err
	}
	cred := ""
	if ds.CredentialID != nil {
		cred = *ds.CredentialID
	}
	sum := sha256.Sum256([]byte(ds.Type + "\x00" + *ds.ActiveVersionID + "\x00" + cred + "\x00" + conn))
	key := hex.EncodeToString(sum[:])
	slot := ds.WorkspaceID + "/" + ds.ID

	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil, errors.New("data source executor is closed")
	}
	now := time.Now()
	var toClose []*pool
	p := l.pools[slot]
	if p != nil && p.key != key {
		delete(l.pools, slot)
		if p.users.Retire() {
			toClose = append(toClose, p)
		}
		p = nil
	}
	if p == nil {
		p = &pool{SQLDB: NewSQLDB(opener(), ds.Type), key: key}
		p.db.SetConnMaxIdleTime(poolConnIdle)
		p.db.SetConnMaxLifetime(poolConnMaxLife)
		l.pools[slot] = p
	}
	p.users.Add()
	p.lastUsed = now
	for s, q := range l.pools { // pools of data sources nobody queries any more
		if q.users.Idle() && now.Sub(q.lastUsed) > poolIdle {
			delete(l.pools, s)
			q.users.Retire()
			toClose = append(toClose, q)
		}
	}
	l.mu.Unlock()
	for _, q := range toClose {
		q.db.Close()
	}
	return p, nil
}

// release ends a query's use of its pool, closing the pool if it was retired meanwhile.
func (l *Live) release(p *pool) {
	if p.users.Done() {
		p.db.Close()
	}
}

// opener returns how to open the pool of a SQL data source and the connection string that
// identifies it (part of the pool's key, so a changed credential value opens a new pool).
func (l *Live) opener(typ, secret string, cfg *Config) (func() *sql.DB, string, error) {
	switch typ {
	case "postgres":
		cc, err := postgresConfig(secret, cfg)
		if err != nil {
			return nil, "", err
		}
		if l.dial != nil {
			cc.DialFunc = l.dial
		}
		return func() *sql.DB { return stdlib.OpenDB(*cc) }, cc.ConnString() + "\x00" + cc.Password, nil
	case "mysql":
		mc, err := mysqlConfig(secret, cfg)
		if err != nil {
			return nil, "", err
		}
		if l.dial != nil {
			mc.DialFunc = l.dial
		}
		connector, err := mysql.NewConnector(mc)
		if err != nil {
			return nil, "", sourceErr("the mysql connection settings are not valid: %v", err)
		}
		return func() *sql.DB { return sql.OpenDB(connector) }, mc.FormatDSN(), nil
	case "sqlite":
		path, err := sqlitePath(secret, cfg, l.deny)
		if err != nil {
			return nil, "", err
		}
		dsn := sqliteDSN(path)
		connector, err := sqlite.NewConnector(dsn)
		if err != nil {
			return nil, "", sourceErr("the sqlite path is not valid")
		}
		return func() *sql.DB { return sql.OpenDB(connector) }, dsn, nil
	}
	return nil, "", fmt.Errorf("no executor for data sources of type %q", typ)
}
