// Package store is the single storage seam of agentplane: every resource is read and written
// through Store, on SQLite (embedded file or in memory) or PostgreSQL, with the same SQL.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pressly/goose/v3"
	"github.com/segmentio/ksuid"

	_ "github.com/jackc/pgx/v5/stdlib" // PostgreSQL driver for database/sql
	_ "modernc.org/sqlite"             // SQLite driver, no cgo
)

// Dialect names the SQL database behind a Store.
type Dialect string

// The supported dialects.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

//go:embed migrations
var migrations embed.FS

// dbtx is what both *sql.DB and *sql.Tx offer; a Store runs its queries on one of them.
type dbtx interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Store reads and writes every resource. A Store returned by Open runs each call on its own;
// the Store passed to the function of InTx runs every call inside that one transaction.
type Store struct {
	dialect Dialect
	db      *sql.DB // readers (SQLite) or the whole pool (PostgreSQL)
	wdb     *sql.DB // the writer pool on SQLite (serialized by wmu); same as db on PostgreSQL
	wmu     *sync.Mutex
	wstmts  *stmtCache // statements prepared on the SQLite writer pool
	group   *group     // SQLite transactions waiting for group commit
	// agentsGen counts commits that wrote the agents table; agentCache entries read at an
	// older count are stale. Only on SQLite, whose file this process alone writes.
	agentsGen  *atomic.Uint64
	agentCache *sync.Map
	r, w       dbtx // where reads and writes go: the pools, or the caller's transaction
	inTx       bool
	gen        *atomic.Uint64
	stmts      *stmtCache
}

// Open connects to url and applies pending migrations. url is one of: "memory" (a private
// in-memory SQLite database), a SQLite file path (optionally prefixed "sqlite://" or "file:"),
// or a "postgres://" / "postgresql://" URL.
func Open(ctx context.Context, url string) (*Store, error) {
	s := &Store{gen: new(atomic.Uint64), stmts: &stmtCache{}, wstmts: &stmtCache{}, wmu: &sync.Mutex{}, group: &group{},
		agentsGen: new(atomic.Uint64)}
	var err error
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		s.dialect = Postgres
		s.db, err = sql.Open("pgx", url)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		s.db.SetMaxOpenConns(32)
		s.db.SetMaxIdleConns(32)
		s.wdb = s.db
	default:
		s.dialect = SQLite
		if err := s.openSQLite(url); err != nil {
			return nil, err
		}
	}
	s.r = &cachedReader{db: s.db, cache: s.stmts, sqlite: s.dialect == SQLite}
	s.w = dbtx(s.wdb)
	if s.dialect == SQLite {
		s.w = sqliteWriter{db: s.wdb, mu: s.wmu, cache: s.wstmts, agentsGen: s.agentsGen}
		s.agentCache = &sync.Map{}
	}
	s.w = genWriter{q: s.w, gen: s.gen}
	if err := s.ping(ctx); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.Migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) openSQLite(url string) error {
	pragmas := "_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	var dsn string
	memory := url == "memory" || url == ":memory:"
	if memory {
		// memdb is shared by every connection of this process that names it, unlike :memory:.
		dsn = "file:/agentplane-" + ksuid.New().String() + "?vfs=memdb&" + pragmas
	} else {
		path := strings.TrimPrefix(strings.TrimPrefix(url, "sqlite://"), "file:")
		if i := strings.IndexByte(path, '?'); i >= 0 {
			path = path[:i]
		}
		if dir := filepath.Dir(path); dir != "" {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return fmt.Errorf("create data directory %s: %w", dir, err)
			}
		}
		dsn = "file:" + path + "?_pragma=journal_mode(WAL)&" + pragmas
	}
	var err error
	if s.db, err = sql.Open("sqlite", dsn); err != nil {
		return fmt.Errorf("open sqlite: %w", err)
	}
	if s.wdb, err = sql.Open("sqlite", dsn); err != nil {
		s.db.Close()
		return fmt.Errorf("open sqlite: %w", err)
	}
	// SQLite has one writer at a time: writers queue on wmu in Go rather than in SQLite's busy
	// loop, on one connection whose prepared statements are reused across transactions.
	s.wdb.SetMaxOpenConns(1)
	s.wdb.SetMaxIdleConns(1)
	s.wdb.SetConnMaxLifetime(0)
	s.db.SetMaxOpenConns(8)
	s.db.SetMaxIdleConns(8)
	s.db.SetConnMaxLifetime(0)
	if memory {
		// memdb has no WAL: a reader and the committing writer would block each other and
		// back off in SQLite's busy handler (1 ms and more). One connection, queued in Go,
		// is faster.
		s.db.Close()
		s.db = s.wdb
	}
	return nil
}

func (s *Store) ping(ctx context.Context) error {
	if err := s.wdb.PingContext(ctx); err != nil {
		return fmt.Errorf("connect to %s: %w", s.dialect, err)
	}
	return nil
}

// Dialect reports which database the store runs on.
func (s *Store) Dialect() Dialect { return s.dialect }

// Close releases the connections.
func (s *Store) Close() error {
	s.stmts.close()
	s.wstmts.close()
	err := s.db.Close()
	if s.wdb != s.db {
		err = errors.Join(err, s.wdb.Close())
	}
	return err
}

// Migrate applies the embedded migrations of the store's dialect that are not applied yet.
func (s *Store) Migrate(ctx context.Context) error {
	sub, err := fs.Sub(migrations, "migrations/"+string(s.dialect))
	if err != nil {
		return fmt.Errorf("migrations for %s: %w", s.dialect, err)
	}
	gd := goose.DialectSQLite3
	if s.dialect == Postgres {
		gd = goose.DialectPostgres
	}
	p, err := goose.NewProvider(gd, s.wdb, sub)
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	return nil
}

// InTx runs fn inside one transaction: every call on the Store given to fn is part of it, and
// it commits only if fn returns nil. Calling InTx on a transactional Store joins that transaction.
//
// On SQLite, transactions that arrive while another is running are committed together
// (group commit); if any of them fails the group is rolled back and each runs on its own, so
// every caller sees exactly its own outcome. fn may therefore run more than once, and must
// not keep effects of a rolled-back attempt.
func (s *Store) InTx(ctx context.Context, fn func(tx *Store) error) error {
	if s.inTx {
		return fn(s)
	}
	if s.dialect == SQLite {
		return s.groupTx(ctx, fn)
	}
	return s.runTx(ctx, []func(*Store) error{fn})
}

// runTx runs fns in one transaction and commits if all succeed.
func (s *Store) runTx(ctx context.Context, fns []func(*Store) error) error {
	if s.dialect == SQLite {
		s.wmu.Lock()
		defer s.wmu.Unlock()
		s.wstmts.prepareWanted(ctx, s.wdb)
	}
	sqlTx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	tx := *s
	tx.r, tx.w, tx.inTx = sqlTx, sqlTx, true
	touched := new(bool)
	if s.dialect == SQLite {
		q := sqliteTx{tx: sqlTx, db: s.wdb, cache: s.wstmts, touched: touched}
		tx.r, tx.w = q, q
	}
	for _, fn := range fns {
		if err := safeCall(fn, &tx); err != nil {
			_ = sqlTx.Rollback()
			return err
		}
	}
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	s.gen.Add(1)
	if *touched {
		s.agentsGen.Add(1) // after the commit, so no reader can cache the old row as new
	}
	return nil
}

func safeCall(fn func(*Store) error, tx *Store) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic in transaction: %v", v)
		}
	}()
	return fn(tx)
}

// maxGroup bounds how many transactions are committed together.
const maxGroup = 64

// group queues SQLite transactions for group commit.
type group struct {
	mu      sync.Mutex
	queue   []*pendingTx
	leading bool
}

type pendingTx struct {
	ctx  context.Context
	fn   func(*Store) error
	err  error
	done bool
	wake chan struct{}
}

// groupTx queues fn; the first caller becomes the leader and runs queued transactions in
// groups, then hands the lead to the next waiting caller, so no caller waits behind an
// unbounded stream of others.
func (s *Store) groupTx(ctx context.Context, fn func(*Store) error) error {
	p := &pendingTx{ctx: ctx, fn: fn, wake: make(chan struct{}, 1)}
	g := s.group
	g.mu.Lock()
	g.queue = append(g.queue, p)
	if g.leading {
		g.mu.Unlock()
		<-p.wake
		g.mu.Lock()
		if p.done {
			g.mu.Unlock()
			return p.err
		}
		// Promoted: lead the next group (which includes p).
	}
	g.leading = true
	batch := g.queue[:min(len(g.queue), maxGroup)]
	g.queue = append([]*pendingTx(nil), g.queue[len(batch):]...)
	g.mu.Unlock()

	s.runGroup(batch)

	g.mu.Lock()
	for _, q := range batch {
		q.done = true
		if q != p {
			q.wake <- struct{}{}
		}
	}
	if len(g.queue) > 0 {
		next := g.queue[0]
		next.wake <- struct{}{}
	} else {
		g.leading = false
	}
	g.mu.Unlock()
	return p.err
}

// runGroup commits a group in one transaction, or each alone when one of them fails.
func (s *Store) runGroup(batch []*pendingTx) {
	fns := make([]func(*Store) error, len(batch))
	for i, q := range batch {
		fns[i] = q.fn
	}
	err := s.runTx(context.WithoutCancel(batch[0].ctx), fns)
	if err == nil || len(batch) == 1 {
		for _, q := range batch {
			q.err = err
		}
		return
	}
	for _, q := range batch {
		q.err = s.runTx(q.ctx, []func(*Store) error{q.fn})
	}
}

// Generation is a counter bumped by every committed write of this process; a cache keyed by
// it is never stale as long as no other process writes the same database.
func (s *Store) Generation() uint64 { return s.gen.Load() }

// exec runs a write on the writer (or the caller's transaction).
func (s *Store) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return s.w.ExecContext(ctx, query, args...)
}

// genWriter bumps the store's generation after every statement on the writer outside a
// transaction (InTx bumps it at commit), so caches keyed by Generation never miss a write.
type genWriter struct {
	q   dbtx
	gen *atomic.Uint64
}

func (g genWriter) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	defer g.gen.Add(1)
	return g.q.ExecContext(ctx, q, args...)
}

func (g genWriter) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	defer g.gen.Add(1)
	return g.q.QueryContext(ctx, q, args...)
}

func (g genWriter) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	defer g.gen.Add(1)
	return g.q.QueryRowContext(ctx, q, args...)
}

// ids makes KSUIDs strictly increasing within the process (KSUID time has one-second
// resolution), so ordering by (created_at, id) is creation order.
var ids struct {
	sync.Mutex
	last ksuid.KSUID
}

// NewID returns a new KSUID string, the form of every resource id.
func NewID() string {
	id := ksuid.New()
	ids.Lock()
	if ksuid.Compare(id, ids.last) <= 0 {
		id = ids.last.Next()
	}
	ids.last = id
	ids.Unlock()
	return id.String()
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }
