package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"time"

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
	e.cl = newCluster(e, e.pgURL, channel)
	e.hub.cl = e.cl
	// The pool answered already: a LISTEN connection that cannot be had soon will not be.
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := e.cl.start(lctx, e.bg, &e.bgwg); err != nil {
		e.cl, e.hub.cl = nil, nil
		return fmt.Errorf("join the cluster: %w", err)
	}
	return nil
}

// heartbeatLoop renews this node's leases every heartbeat until the node stops.
func (e *Engine) heartbeatLoop() {
	t := time.NewTicker(e.heartbeat)
	defer t.Stop()
	for {
		select {
		case <-e.bg.Done():
			return
		case <-t.C:
			e.renew(e.bg)
		}
	}
}

// renew extends the leases of every run of this node in one statement. A run missing from
// the answer lost its lease to a rescue and is stopped here. When the leases could not be
// renewed and the next heartbeat may come after they expire, every run is stopped: another
// node may rescue them then, and must find them stopped.
func (e *Engine) renew(ctx context.Context) {
	// The runs to check are those registered before the statement: claimMu makes sure each
	// row this node owned by then has its handle.
	e.claimMu.Lock()
	e.mu.Lock()
	before := make(map[string]*handle, len(e.live))
	for id, h := range e.live {
		before[id] = h
	}
	e.mu.Unlock()
	e.claimMu.Unlock()
	started := time.Now()
	renewed, err := e.st.ExecutionLeasesRenew(ctx, e.node, e.lease)
	if err == nil {
		err = e.fault()
	}
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		since := time.Since(time.Unix(0, e.lastRenewal.Load()))
		e.log.Error("renew leases", "error", err, "last_renewed_ago", since)
		if since+e.heartbeat >= e.lease {
			for id, h := range before {
				e.log.Warn("stopping a run whose lease could not be renewed", "execution_id", id)
				h.cancel(errLeaseLost)
			}
		}
		return
	}
	e.lastRenewal.Store(started.UnixNano())
	held := make(map[string]int, len(renewed))
	for _, r := range renewed {
		held[r.ID] = r.Attempt
	}
	for id, h := range before {
		if a, ok := held[id]; ok && a == h.attempt || h.finishing.Load() {
			continue
		}
		select {
		case <-h.done:
		default:
			// Not this node's any more (rescued after a stall, say): it must stop now.
			e.log.Warn("stopping a run this node no longer owns", "execution_id", id)
			h.cancel(errLeaseLost)
		}
	}
}

func (e *Engine) newLeaderLock() leaderLock {
	if e.cl == nil {
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
func (e *Engine) rescued(ctx context.Context, x *store.Execution, requeued bool) {
	e.changed(x.ID)
	if requeued {
		e.queued()
		return
	}
	e.reportEnd(ctx, x, nil, store.StatusFailed, store.Now().Sub(x.CreatedAt.Time).Milliseconds(), nil, nil)
}
