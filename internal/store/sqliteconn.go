package store

import (
	"container/list"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"

	"modernc.org/sqlite"
)

// SQLite connections keep their prepared statements, as pgx does for PostgreSQL (its
// QueryExecModeCacheStatement): modernc's driver parses every query it is given, and parsing
// was the largest single cost of a small statement. BenchmarkExecuteSync (bench/, 2 cores):
// the emulator spent about 350 µs of CPU per sync execution with statements kept against
// about 530 µs with each one parsed again.

// maxConnStmts bounds the statements one connection keeps; the least recently used one is
// closed beyond it. Queries are built from a fixed set of shapes, so this only guards against
// an unforeseen variety of texts.
const maxConnStmts = 256

// stmtConnector opens SQLite connections that keep their prepared statements.
type stmtConnector struct{ inner driver.Connector }

func newStmtConnector(dsn string) (driver.Connector, error) {
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	return stmtConnector{inner: c}, nil
}

func (c stmtConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	conn, ok := dc.(sqliteDriverConn)
	if !ok {
		dc.Close()
		return nil, errors.New("sqlite: driver connection lacks the context methods")
	}
	return &stmtConn{sqliteDriverConn: conn, stmts: map[string]*list.Element{}, lru: list.New()}, nil
}

func (c stmtConnector) Driver() driver.Driver { return c.inner.Driver() }

// sqliteDriverConn is what database/sql uses of a modernc connection.
type sqliteDriverConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// stmtConn is a SQLite connection whose queries run on statements prepared once per query
// text. database/sql uses a connection from one goroutine at a time, so it needs no lock.
type stmtConn struct {
	sqliteDriverConn
	stmts map[string]*list.Element // query text → element of lru holding a *connStmt
	lru   *list.List               // most recently used first
}

// connStmt is a kept statement; busy while rows read from it are open, since a SQLite
// statement runs one execution at a time.
type connStmt struct {
	query string
	ds    driver.Stmt
	busy  bool
}

var (
	_ driver.ExecerContext  = (*stmtConn)(nil)
	_ driver.QueryerContext = (*stmtConn)(nil)
)

// stmt returns the kept statement of query, preparing it on first use.
func (c *stmtConn) stmt(ctx context.Context, query string) (*connStmt, error) {
	if e, ok := c.stmts[query]; ok {
		c.lru.MoveToFront(e)
		return e.Value.(*connStmt), nil
	}
	ds, err := c.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	cs := &connStmt{query: query, ds: ds}
	c.stmts[query] = c.lru.PushFront(cs)
	if c.lru.Len() > maxConnStmts {
		c.evict()
	}
	return cs, nil
}

// evict closes the least recently used statement that no rows are reading.
func (c *stmtConn) evict() {
	for e := c.lru.Back(); e != nil; e = e.Prev() {
		cs := e.Value.(*connStmt)
		if cs.busy {
			continue
		}
		c.lru.Remove(e)
		delete(c.stmts, cs.query)
		_ = cs.ds.Close()
		return
	}
}

// ExecContext runs query on its kept statement (or on a statement of its own while rows of
// the kept one are open).
func (c *stmtConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cs, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs.busy {
		ds, err := c.PrepareContext(ctx, query)
		if err != nil {
			return nil, err
		}
		defer ds.Close()
		return ds.(driver.StmtExecContext).ExecContext(ctx, args)
	}
	return cs.ds.(driver.StmtExecContext).ExecContext(ctx, args)
}

// QueryContext runs query on its kept statement, which stays busy until the rows close (or
// on a statement of its own, closed with the rows, while the kept one is busy).
func (c *stmtConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs.busy {
		ds, err := c.PrepareContext(ctx, query)
		if err != nil {
			return nil, err
		}
		rows, err := ds.(driver.StmtQueryContext).QueryContext(ctx, args)
		if err != nil {
			ds.Close()
			return nil, err
		}
		return &stmtRows{Rows: rows, done: func() { ds.Close() }}, nil
	}
	rows, err := cs.ds.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	cs.busy = true
	return &stmtRows{Rows: rows, done: func() { cs.busy = false }}, nil
}

// Close closes the kept statements, then the connection.
func (c *stmtConn) Close() error {
	var errs []error
	for e := c.lru.Front(); e != nil; e = e.Next() {
		errs = append(errs, e.Value.(*connStmt).ds.Close())
	}
	clear(c.stmts)
	c.lru.Init()
	return errors.Join(append(errs, c.sqliteDriverConn.Close())...)
}

// stmtRows releases its statement when closed.
type stmtRows struct {
	driver.Rows
	done   func()
	closed bool
}

func (r *stmtRows) Close() error {
	err := r.Rows.Close()
	if !r.closed {
		r.closed = true
		r.done()
	}
	return err
}
