// Package pgbus holds the two dedicated PostgreSQL connections a node of a cluster keeps
// besides its pool: one that LISTENs for the messages nodes send each other (pg_notify), and
// one that holds the session advisory lock electing the leader. Both belong to the node's
// session: when the node dies, PostgreSQL drops its LISTEN and releases its lock.
package pgbus

import (
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Listener receives the notifications of one channel on a connection of its own, and
// reconnects (with backoff) whenever that connection fails.
type Listener struct {
	url, channel string
	log          *slog.Logger
	// Handle is called with each payload, in the order PostgreSQL delivers them (commit order).
	handle func(payload string)
	// connected is called once a (re)connection is listening: messages sent while there was
	// none are lost, so whoever waits on one must look again.
	connected func()
	wg        sync.WaitGroup
	cancel    context.CancelFunc
	ready     chan struct{}
	readyOnce sync.Once
}

// NewListener returns a listener of channel on the database at url; Start starts it.
func NewListener(url, channel string, log *slog.Logger, handle func(payload string), connected func()) *Listener {
	return &Listener{url: url, channel: channel, log: log, handle: handle, connected: connected, ready: make(chan struct{})}
}

// Start connects and listens in the background until Stop. It waits (until ctx ends) for the
// first connection, so that a node hears the others from its first request on.
func (l *Listener) Start(ctx context.Context) error {
	run, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	l.wg.Go(func() { l.loop(run) })
	select {
	case <-l.ready:
		return nil
	case <-ctx.Done():
		l.Stop()
		return fmt.Errorf("listen on %s: %w", l.channel, ctx.Err())
	}
}

// Stop closes the connection and waits for the listener to end. Calling it again does nothing.
func (l *Listener) Stop() {
	if l.cancel != nil {
		l.cancel()
	}
	l.wg.Wait()
}

func (l *Listener) loop(ctx context.Context) {
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		err := l.listen(ctx)
		if ctx.Err() != nil {
			return
		}
		l.log.Warn("notification listener lost its connection; reconnecting", "channel", l.channel, "error", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// listen runs one connection until it fails or ctx ends.
func (l *Listener) listen(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, l.url)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{l.channel}.Sanitize()); err != nil {
		return err
	}
	l.readyOnce.Do(func() { close(l.ready) })
	if l.connected != nil {
		l.connected()
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		l.handle(n.Payload)
	}
}

// Lock is a PostgreSQL session advisory lock held on a connection of its own: the node
// holding it is the leader, until it lets go or its session ends.
type Lock struct {
	url  string
	name string
	key  int64
	mu   sync.Mutex
	conn *pgx.Conn
	held bool
}

// NewLock returns the advisory lock named name on the database at url. The key is derived
// from name and the connection's current schema, so clusters on different schemas of one
// database elect their own leaders.
func NewLock(url, name string) *Lock { return &Lock{url: url, name: name} }

// Hold reports whether this node holds the lock, trying to take it when it does not. A held
// lock is checked with a round trip each time: a connection that died took the lock with it.
func (k *Lock) Hold(ctx context.Context) (bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.conn != nil && k.held {
		if err := k.conn.Ping(ctx); err == nil {
			return true, nil
		}
		k.closeLocked()
	}
	if k.conn == nil {
		conn, err := pgx.Connect(ctx, k.url)
		if err != nil {
			return false, err
		}
		var schema string
		if err := conn.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
			conn.Close(ctx)
			return false, err
		}
		h := fnv.New64a()
		h.Write([]byte(k.name + " " + schema))
		k.key = int64(h.Sum64())
		k.conn = conn
	}
	var ok bool
	if err := k.conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", k.key).Scan(&ok); err != nil {
		k.closeLocked()
		return false, err
	}
	k.held = ok
	return ok, nil
}

// Release lets go of the lock and closes its connection. Calling it again does nothing.
func (k *Lock) Release() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.closeLocked()
}

func (k *Lock) closeLocked() {
	if k.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		// Closing the session releases its advisory locks.
		_ = k.conn.Close(ctx)
		k.conn = nil
	}
	k.held = false
}
