package store

import (
	"context"
	"database/sql"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
)

// The store's SQL uses PostgreSQL's numbered placeholders ($1, $2 …). SQLite accepts them but
// binds them by name, which is markedly slower than plain "?" in modernc's driver; so on
// SQLite each query text is rewritten once to "?" placeholders plus the argument order.

type rebound struct {
	query string
	order []int // order[i] is the 0-based index of the argument for the i-th "?"
	// agents is set for statements that write the agents table (see Store.AgentGet's cache).
	agents bool
}

var agentsWrite = regexp.MustCompile(`(?is)^\s*(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+agents\b`)

var rebindCache sync.Map // original text -> *rebound

// rebind rewrites $N placeholders outside string literals and quoted identifiers.
func rebind(q string) *rebound {
	if v, ok := rebindCache.Load(q); ok {
		return v.(*rebound)
	}
	out := make([]byte, 0, len(q))
	var order []int
	var quote byte
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '$' && i+1 < len(q) && q[i+1] >= '0' && q[i+1] <= '9':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			n, _ := strconv.Atoi(q[i+1 : j])
			order = append(order, n-1)
			out = append(out, '?')
			i = j - 1
			continue
		}
		out = append(out, c)
	}
	r := &rebound{query: string(out), order: order, agents: agentsWrite.MatchString(q)}
	rebindCache.Store(q, r)
	return r
}

func (r *rebound) args(args []any) []any {
	if len(r.order) == 0 {
		return args
	}
	out := make([]any, len(r.order))
	for i, n := range r.order {
		if n >= 0 && n < len(args) {
			out[i] = args[n]
		}
	}
	return out
}

// sqliteTx runs the statements of a SQLite transaction with rebound placeholders, through
// statements prepared once on the writer pool and reused on the transaction's connection.
type sqliteTx struct {
	tx      *sql.Tx
	db      *sql.DB
	cache   *stmtCache
	touched *bool // set when a statement writes the agents table
}

func (t sqliteTx) stmt(ctx context.Context, q string) (*sql.Stmt, []any, func(args []any) []any) {
	r := rebind(q)
	if r.agents {
		*t.touched = true
	}
	st := t.cache.lookup(r.query)
	if st == nil {
		return nil, nil, r.args
	}
	return t.tx.StmtContext(ctx, st), nil, r.args
}

func (t sqliteTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if st, _, bind := t.stmt(ctx, q); st != nil {
		return st.ExecContext(ctx, bind(args)...)
	}
	r := rebind(q) // stmt has marked an agents write already
	return t.tx.ExecContext(ctx, r.query, r.args(args)...)
}

func (t sqliteTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if st, _, bind := t.stmt(ctx, q); st != nil {
		return st.QueryContext(ctx, bind(args)...)
	}
	r := rebind(q)
	return t.tx.QueryContext(ctx, r.query, r.args(args)...)
}

func (t sqliteTx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	if st, _, bind := t.stmt(ctx, q); st != nil {
		return st.QueryRowContext(ctx, bind(args)...)
	}
	r := rebind(q)
	return t.tx.QueryRowContext(ctx, r.query, r.args(args)...)
}

// sqliteWriter runs a single write outside a transaction, holding the writer lock.
type sqliteWriter struct {
	db        *sql.DB
	mu        *sync.Mutex
	cache     *stmtCache
	agentsGen *atomic.Uint64
}

// done bumps the agents generation after a statement that wrote the agents table.
func (w sqliteWriter) done(r *rebound) {
	if r.agents {
		w.agentsGen.Add(1)
	}
}

func (w sqliteWriter) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := rebind(q)
	defer w.done(r)
	if st, err := w.cache.get(ctx, w.db, r.query); err == nil && st != nil {
		return st.ExecContext(ctx, r.args(args)...)
	}
	return w.db.ExecContext(ctx, r.query, r.args(args)...)
}

// QueryContext holds the writer lock only while the statement starts; SQLite's own lock
// and busy timeout cover the rest, as these are rare (reads of RETURNING clauses).
func (w sqliteWriter) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := rebind(q)
	defer w.done(r)
	return w.db.QueryContext(ctx, r.query, r.args(args)...)
}

func (w sqliteWriter) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := rebind(q)
	defer w.done(r)
	return w.db.QueryRowContext(ctx, r.query, r.args(args)...)
}
