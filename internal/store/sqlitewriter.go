package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
)

// sqliteWriter runs the transactions of a SQLite store on its one writer connection, one
// after another. A transaction whose turn comes while the one before it is still open joins
// it instead of waiting for its commit: each runs in a savepoint of one BEGIN IMMEDIATE …
// COMMIT, so a batch of them pays once for what a commit costs (the WAL frames of the pages
// they share, the locks, the checkpoints).
//
// Why a batch: BenchmarkExecuteSync (bench/, 2 cores) measured `serve` on SQLite at about
// 1,650 sync executions/s with one commit per transaction against about 2,550/s batched: a
// run commits twice, and each commit writes about ten WAL frames (two system calls each) and
// takes the file locks, all while every other writer waits.
//
// What a caller sees is what a transaction of its own would give: fn runs exactly once, on
// the caller's goroutine, and sees the writes of the transactions before it. When fn fails
// (or panics), its savepoint is rolled back and the batch goes on without it. When fn
// succeeds, InTx returns once the batch is committed, with the COMMIT's error if it failed.
type sqliteWriter struct {
	db      *sql.DB // the writer pool: one connection
	gen     *atomic.Uint64
	turn    sync.Mutex   // held while one transaction's fn runs
	waiting atomic.Int32 // goroutines waiting for the turn
	open    *txBatch     // the batch a transaction given the turn joins (guarded by turn)
}

// maxBatch bounds how many transactions share one commit, and so how long the first waits.
const maxBatch = 32

// txBatch is one SQLite transaction shared by the transactions of a batch.
type txBatch struct {
	conn    *sql.Conn
	members int           // transactions whose fn succeeded, waiting for the commit
	broken  error         // set when a failure may have ended the SQLite transaction
	done    chan struct{} // closed once committed (or rolled back); err is then set
	err     error
}

func (w *sqliteWriter) inTx(ctx context.Context, s *Store, fn func(tx *Store) error) error {
	w.waiting.Add(1)
	w.turn.Lock()
	w.waiting.Add(-1)
	b := w.open
	if b == nil {
		var err error
		if b, err = w.begin(ctx); err != nil {
			w.turn.Unlock()
			return err
		}
		w.open = b
	}
	// Statements run without the caller's cancellation: SQLite answers an interrupted write
	// by rolling back the whole transaction, the batch's. fn may still give up on ctx.
	bg := context.WithoutCancel(ctx)
	finished := false
	defer func() {
		if !finished { // fn panicked: undo its writes and pass the turn on; the panic goes on
			b.rollbackTo(bg)
			w.endTurn(b, false)
		}
	}()
	if _, err := b.conn.ExecContext(bg, "SAVEPOINT tx"); err != nil {
		finished = true
		b.broken = fmt.Errorf("savepoint: %w", err)
		w.endTurn(b, false)
		return b.broken
	}
	tx := *s
	q := noCancel{b.conn}
	tx.r, tx.w, tx.inTx = q, q, true
	err := fn(&tx)
	finished = true
	if err != nil {
		b.rollbackTo(bg)
		w.endTurn(b, false)
		return err
	}
	if _, err := b.conn.ExecContext(bg, "RELEASE tx"); err != nil {
		b.broken = fmt.Errorf("release savepoint: %w", err)
		w.endTurn(b, false)
		return b.broken
	}
	w.endTurn(b, true)
	<-b.done
	return b.err
}

// begin opens a batch on the writer connection.
func (w *sqliteWriter) begin(ctx context.Context) (*txBatch, error) {
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	if _, err := conn.ExecContext(context.WithoutCancel(ctx), "BEGIN IMMEDIATE"); err != nil {
		conn.Close()
		return nil, fmt.Errorf("begin: %w", err)
	}
	return &txBatch{conn: conn, done: make(chan struct{})}, nil
}

// rollbackTo undoes the writes of the transaction whose savepoint is open. If that fails,
// SQLite has rolled back the whole transaction already (as it does on SQLITE_FULL, IOERR,
// BUSY or NOMEM), and the batch is marked broken.
func (b *txBatch) rollbackTo(ctx context.Context) {
	if _, err := b.conn.ExecContext(ctx, "ROLLBACK TO tx"); err != nil {
		b.broken = fmt.Errorf("roll back savepoint: %w", err)
		return
	}
	if _, err := b.conn.ExecContext(ctx, "RELEASE tx"); err != nil {
		b.broken = fmt.Errorf("release savepoint: %w", err)
	}
}

// endTurn counts a transaction that joined b, commits b unless another transaction is
// waiting to join it, and passes the turn on.
func (w *sqliteWriter) endTurn(b *txBatch, joined bool) {
	if joined {
		b.members++
	}
	if b.broken == nil && b.members < maxBatch && w.waiting.Load() > 0 {
		w.turn.Unlock()
		return
	}
	w.open = nil
	ctx := context.Background()
	switch {
	case b.broken != nil:
		_, _ = b.conn.ExecContext(ctx, "ROLLBACK")
		b.err = fmt.Errorf("transaction rolled back by a failure in the same batch: %w", b.broken)
	default:
		if _, err := b.conn.ExecContext(ctx, "COMMIT"); err != nil {
			_, _ = b.conn.ExecContext(ctx, "ROLLBACK")
			b.err = fmt.Errorf("commit: %w", err)
		}
	}
	_ = b.conn.Close() // back to the pool; what it answers changes nothing committed
	if b.err == nil && b.members > 0 {
		w.gen.Add(1)
	}
	close(b.done)
	w.turn.Unlock()
}

// noCancel runs statements on a connection without the caller's cancellation.
type noCancel struct{ c *sql.Conn }

func (n noCancel) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return n.c.ExecContext(context.WithoutCancel(ctx), q, args...)
}

func (n noCancel) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return n.c.QueryContext(context.WithoutCancel(ctx), q, args...)
}

func (n noCancel) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return n.c.QueryRowContext(context.WithoutCancel(ctx), q, args...)
}
