package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/pgbus"
	"github.com/agentplane/agentplane/internal/store"
)

// The queue is the executions table itself, with leases of our own, rather than River
// (riverqueue/river): River renews no lease (a running job counts as stuck only after the
// fixed RescueStuckJobsAfter), so a lease renewed by heartbeat would live on the executions
// row anyway; sync runs and chat turns start at once in the API process and are not queue
// jobs; and River's SQLite driver is not served for the River version PostgreSQL would use.
// What River guarantees is kept: a durable queue, leases renewed by heartbeat, one elected
// leader rescuing expired work, a drain on shutdown, and no pass running twice (every write
// of a pass is fenced by its owner and attempt).

// newNodeID returns a random id for this process; the host name goes in logs beside it.
func newNodeID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	host, _ := os.Hostname()
	if host == "" {
		host = "node"
	}
	if len(host) > 32 {
		host = host[:32]
	}
	return host + "-" + hex.EncodeToString(b)
}

// startCluster connects to the other nodes on PostgreSQL; nothing on SQLite.
func (e *Engine) startCluster(ctx context.Context) error {
	if e.pgURL == "" || e.st.Dialect() != store.Postgres {
		return nil
	}
	channel, err := e.st.NotifyChannel(ctx)
	if err != nil {
		return err
	}
	cl := newCluster(e, e.pgURL, channel)
	e.notify.join(cl)
	// The pool answered already: a LISTEN connection that cannot be had soon will not be.
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := cl.start(lctx, e.bg, &e.bgwg); err != nil {
		e.notify.join(nil)
		return fmt.Errorf("join the cluster: %w", err)
	}
	return nil
}

func (e *Engine) newLeaderLock() leaderLock {
	if e.notify.cl == nil {
		return soleNode{}
	}
	return pgLeader{lock: pgbus.NewLock(e.pgURL, "agentplane leader")}
}

// lead is the leader's work, every rescue interval: it rescues expired leases and decides
// timed-out approvals.
func (e *Engine) lead(ctx context.Context) {
	if _, err := e.rescuer.rescue(ctx); err != nil && ctx.Err() == nil {
		e.log.Error("rescue expired leases", "error", err)
	}
	if err := e.expireApprovals(ctx); err != nil && ctx.Err() == nil {
		e.log.Error("decide expired approvals", "error", err)
	}
}

// Leading reports whether this node was the elected leader at its last election (every few
// seconds): the leader's other jobs (the retention purge) run only while it is true.
func (e *Engine) Leading() bool { return e.elect.isLeading() }

// rescued tells of a run the rescuer took over: whoever waits for it looks again, and a
// queued one wakes a worker, here or on another node; a failed one is reported as ended.
func (e *Engine) rescued(ctx context.Context, x *domain.Execution, requeued bool) {
	e.changed(x.ID)
	if requeued {
		e.queued()
		return
	}
	e.reportEnd(ctx, x, nil, domain.StatusFailed, domain.Now().Sub(x.CreatedAt.Time).Milliseconds(), nil, nil)
}
