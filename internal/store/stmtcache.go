package store

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
)

// maxCachedStmts bounds the cache; queries are built from a fixed set of shapes, so this is
// only a guard against an unforeseen explosion of distinct texts.
const maxCachedStmts = 512

// stmtCache keeps one prepared statement per query text for the read pool: parsing SQL is
// the largest cost of a small read, and a *sql.Stmt is safe for concurrent use.
type stmtCache struct {
	m    sync.Map // query text -> *sql.Stmt
	n    sync.Mutex
	c    int
	full atomic.Bool
	// wanted holds texts met inside a transaction, to prepare when the writer is free.
	wanted map[string]struct{}
}

// lookup returns a prepared statement without preparing one; a miss is remembered so that
// prepareWanted can prepare it later.
func (c *stmtCache) lookup(q string) *sql.Stmt {
	if v, ok := c.m.Load(q); ok {
		return v.(*sql.Stmt)
	}
	if c.full.Load() {
		return nil
	}
	c.n.Lock()
	if c.wanted == nil {
		c.wanted = map[string]struct{}{}
	}
	c.wanted[q] = struct{}{}
	c.n.Unlock()
	return nil
}

// prepareWanted prepares the statements lookup missed; the caller holds the writer and no
// transaction is open, so the single writer connection is free.
func (c *stmtCache) prepareWanted(ctx context.Context, db *sql.DB) {
	c.n.Lock()
	wanted := c.wanted
	c.wanted = nil
	c.n.Unlock()
	for q := range wanted {
		if _, err := c.get(ctx, db, q); err != nil {
			return // the statement will run unprepared and be retried later
		}
	}
}

func (c *stmtCache) get(ctx context.Context, db *sql.DB, q string) (*sql.Stmt, error) {
	if v, ok := c.m.Load(q); ok {
		return v.(*sql.Stmt), nil
	}
	if c.full.Load() {
		return nil, nil
	}
	st, err := db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	c.n.Lock()
	defer c.n.Unlock()
	if v, ok := c.m.Load(q); ok {
		st.Close()
		return v.(*sql.Stmt), nil
	}
	if c.c >= maxCachedStmts {
		st.Close()
		return nil, nil // full: the caller runs the query unprepared
	}
	c.m.Store(q, st)
	c.c++
	if c.c >= maxCachedStmts {
		c.full.Store(true)
	}
	return st, nil
}

func (c *stmtCache) close() {
	c.m.Range(func(_, v any) bool {
		v.(*sql.Stmt).Close()
		return true
	})
}

// cachedReader runs reads on the pool through prepared statements (placeholders rebound
// for SQLite when sqlite is set).
type cachedReader struct {
	db     *sql.DB
	cache  *stmtCache
	sqlite bool
}

func (r *cachedReader) prep(q string, args []any) (string, []any) {
	if !r.sqlite {
		return q, args
	}
	rb := rebind(q)
	return rb.query, rb.args(args)
}

func (r *cachedReader) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	q, args = r.prep(q, args)
	return r.db.ExecContext(ctx, q, args...)
}

func (r *cachedReader) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	q, args = r.prep(q, args)
	st, err := r.cache.get(ctx, r.db, q)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return r.db.QueryContext(ctx, q, args...)
	}
	return st.QueryContext(ctx, args...)
}

func (r *cachedReader) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	q, args = r.prep(q, args)
	st, err := r.cache.get(ctx, r.db, q)
	if err != nil || st == nil {
		// Uncached, or let database/sql report the prepare error through the Row.
		return r.db.QueryRowContext(ctx, q, args...)
	}
	return st.QueryRowContext(ctx, args...)
}
