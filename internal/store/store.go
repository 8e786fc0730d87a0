// Package store is the single storage seam of agentplane: every resource is read and written
// through Store, on SQLite (embedded file or in memory) or PostgreSQL, with the same SQL.
package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
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
//
// The SQL is PostgreSQL's, numbered placeholders ($1, $2 …) included: SQLite reads them as
// named parameters, which modernc's driver binds by number. A statement that must differ
// between the dialects branches on s.dialect inside its method.
type Store struct {
	dialect Dialect
	db      *sql.DB // readers (SQLite) or the whole pool (PostgreSQL)
	wdb     *sql.DB // the one SQLite writer connection; the same pool as db on PostgreSQL
	r, w    dbtx    // where reads and writes go: the pools, or the caller's transaction
	inTx    bool
	gen     *atomic.Uint64 // see Generation
	writer  *sqliteWriter  // SQLite's transactions; nil on PostgreSQL
	hooks   *hooks         // shared by the Store and its transactions; see SetTerminalHook
	ended   *endedRun      // what the terminal hooks read of an ending run, read once; see runTerminalHook
	memURI  string         // the memdb database of a "memory" store; empty otherwise
}

// Open connects to url and applies pending migrations. url is one of: "memory" (a private
// in-memory SQLite database), a SQLite file path (optionally prefixed "sqlite://" or "file:"),
// or a "postgres://" / "postgresql://" URL.
func Open(ctx context.Context, url string) (*Store, error) {
	if isMemory(url) {
		return openMemory(ctx)
	}
	return openMigrated(ctx, url)
}

// openMigrated connects to url and applies its pending migrations.
func openMigrated(ctx context.Context, url string) (*Store, error) {
	s, err := connect(ctx, url)
	if err != nil {
		return nil, err
	}
	if err := s.Migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func isMemory(url string) bool { return url == "memory" || url == ":memory:" }

// connect opens the store's connections to url, without migrating.
func connect(ctx context.Context, url string) (*Store, error) {
	s := &Store{gen: new(atomic.Uint64), hooks: new(hooks)}
	var err error
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		s.dialect = Postgres
		// pgx prepares each statement once per connection and keeps it (its default
		// QueryExecModeCacheStatement), so plain queries on the pool cost one round trip.
		s.db, err = sql.Open("pgx", url)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		// A few connections per core: more backends than the database's cores only make them
		// take turns (BenchmarkAuthenticatedList, 2 cores: the backends spent about 70 µs of
		// CPU per request with 8 connections, about 90 µs with 32), and every node of a
		// cluster holds its own pool under the server's max_connections.
		n := max(8, 4*runtime.GOMAXPROCS(0))
		s.db.SetMaxOpenConns(n)
		s.db.SetMaxIdleConns(n)
		s.wdb = s.db
	default:
		s.dialect = SQLite
		if err := s.openSQLite(url); err != nil {
			return nil, err
		}
	}
	s.r, s.w = s.db, genWriter{q: s.wdb, gen: s.gen}
	if s.dialect == SQLite {
		s.writer = &sqliteWriter{db: s.wdb, gen: s.gen}
	}
	if err := s.ping(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) openSQLite(url string) error {
	// temp_store(memory) keeps the statement journal of the writer's savepoints (see
	// sqliteWriter) in memory: with the default, a savepoint whose pages pass 64 KiB spills it
	// to a temporary file, a write system call per page from then on. BenchmarkExperiment's
	// CPU profile had 12-14 % of all samples in that journal's writes; with it in memory, 1 %.
	// Sorts that need temporary storage are held in memory too: the reads are served by
	// indexes (issue 18), and Migrate, whose index builds sort whole tables, uses files.
	pragmas := "_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_pragma=temp_store(memory)&_txlock=immediate"
	var dsn string
	memory := isMemory(url)
	if memory {
		// memdb is shared by every connection of this process that names it, unlike :memory:.
		s.memURI = "file:/agentplane-" + ksuid.New().String() + "?vfs=memdb"
		dsn = s.memURI + "&" + pragmas
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
		if _, err := domain.SecureSQLiteFiles(path); err != nil {
			return err
		}
		dsn = "file:" + path + "?_pragma=journal_mode(WAL)&" + pragmas
	}
	connector, err := newStmtConnector(dsn)
	if err != nil {
		return err
	}
	s.db, s.wdb = sql.OpenDB(connector), sql.OpenDB(connector)
	// SQLite has one writer at a time: every write and transaction of this process runs on
	// one connection, so writers queue in database/sql rather than in SQLite's busy loop, and
	// readers (WAL) never wait for them.
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
	err := s.db.Close()
	if s.wdb != s.db {
		err = errors.Join(err, s.wdb.Close())
	}
	return err
}

// Migrate applies the embedded migrations of the store's dialect that are not applied yet.
func (s *Store) Migrate(ctx context.Context) error {
	p, err := s.migrations()
	if err != nil {
		return err
	}
	if s.dialect == SQLite {
		// A migration that builds an index on a large table sorts all of its keys: in a
		// temporary file, not in memory as temp_store(memory) would (see openSQLite). The
		// writer pool's one connection runs the migrations.
		if _, err := s.wdb.ExecContext(ctx, "PRAGMA temp_store = FILE"); err != nil {
			return fmt.Errorf("apply migrations: %w", err)
		}
		defer s.wdb.ExecContext(context.WithoutCancel(ctx), "PRAGMA temp_store = MEMORY")
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	return nil
}

// migrations is the goose provider of the store's dialect.
func (s *Store) migrations() (*goose.Provider, error) {
	sub, err := fs.Sub(migrations, "migrations/"+string(s.dialect))
	if err != nil {
		return nil, fmt.Errorf("migrations for %s: %w", s.dialect, err)
	}
	gd := goose.DialectSQLite3
	if s.dialect == Postgres {
		gd = goose.DialectPostgres
	}
	// Migrations are numbered as they are planned, not as they land: one numbered below the
	// database's newest (00012 after 00013, say) is still applied.
	p, err := goose.NewProvider(gd, s.wdb, sub, goose.WithAllowOutofOrder(true))
	if err != nil {
		return nil, fmt.Errorf("load migrations: %w", err)
	}
	return p, nil
}

// InTx runs fn inside one transaction: every call on the Store given to fn is part of it, and
// it commits only if fn returns nil (a panic in fn rolls it back and goes on). Calling InTx on
// a transactional Store joins that transaction. fn runs exactly once.
//
// On SQLite, transactions take turns on the one writer connection, and those that queue up
// behind each other share a commit (see sqliteWriter); each still commits or fails as if alone.
func (s *Store) InTx(ctx context.Context, fn func(tx *Store) error) error {
	if s.inTx {
		return fn(s)
	}
	if s.writer != nil {
		return s.writer.inTx(ctx, s, fn)
	}
	sqlTx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			_ = sqlTx.Rollback()
		}
	}()
	tx := *s
	tx.r, tx.w, tx.inTx = sqlTx, sqlTx, true
	if err := fn(&tx); err != nil {
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	committed = true
	s.gen.Add(1)
	return nil
}

// Generation is a counter bumped after every committed write of this process (a transaction
// or a single statement); a cache keyed by it is never stale as long as no other process
// writes the same database. The emulator's read cache relies on it.
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

// spanIDs makes span ids strictly increasing within the process.
var spanIDs struct {
	sync.Mutex
	last uint64
}

// NewSpanID returns a new span id: 16 hex digits (8 bytes), the size of an OpenTelemetry span
// id, a third shorter than a KSUID in every span row and in its key. A span id only needs to
// be unique within its trace: it is the time in milliseconds (48 bits) and 16 random bits,
// kept strictly increasing within the process, so that spans of a run started in the same
// millisecond still sort in the order they started (traces order spans by start, then id).
func NewSpanID() string {
	var r [2]byte
	_, _ = rand.Read(r[:])
	v := uint64(time.Now().UnixMilli())<<16 | uint64(r[0])<<8 | uint64(r[1])
	spanIDs.Lock()
	if v <= spanIDs.last {
		v = spanIDs.last + 1
	}
	spanIDs.last = v
	spanIDs.Unlock()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return hex.EncodeToString(b[:]) // as %016x, without fmt's boxing of v
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }
