package runtime

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/agentplane/agentplane/internal/background"
)

// heartbeatConfig is what a heartbeat needs.
type heartbeatConfig struct {
	Store Store
	// Node is this node; Lease how long each renewal extends its runs' leases; Interval how
	// often it renews them.
	Node            string
	Lease, Interval time.Duration
	// Runs are the runs of this node whose leases it renews.
	Runs *registry
	// Fault, when set, is an error tests inject into the renewal.
	Fault  func() error
	Logger *slog.Logger
}

// heartbeat renews the leases of this node's runs, and stops the runs this node no longer
// owns (rescued by another node after a stall) or can no longer be sure to own (renewals
// failing for longer than a lease).
type heartbeat struct {
	cfg heartbeatConfig
	// lastRenewal is when the last successful renewal started (Unix ns).
	lastRenewal atomic.Int64
}

// newHeartbeat returns a heartbeat whose leases count as renewed now.
func newHeartbeat(cfg heartbeatConfig) *heartbeat {
	hb := &heartbeat{cfg: cfg}
	hb.lastRenewal.Store(time.Now().UnixNano())
	return hb
}

// run renews the leases every Interval until ctx ends.
func (hb *heartbeat) run(ctx context.Context) {
	background.Every(ctx, hb.cfg.Interval, func() bool {
		hb.renew(ctx)
		return true
	})
}

// renew extends the leases of every run of this node in one statement. A run missing from
// the answer lost its lease to a rescue and is stopped here. When the leases could not be
// renewed and the next heartbeat may come after they expire, every run is stopped: another
// node may rescue them then, and must find them stopped.
func (hb *heartbeat) renew(ctx context.Context) {
	// The runs to check are those registered before the statement.
	before := hb.cfg.Runs.snapshot()
	started := time.Now()
	renewed, err := hb.cfg.Store.ExecutionLeasesRenew(ctx, hb.cfg.Node, hb.cfg.Lease)
	if err == nil && hb.cfg.Fault != nil {
		err = hb.cfg.Fault()
	}
	if err != nil {
		if ctx.Err() == nil {
			hb.failed(before, err)
		}
		return
	}
	hb.lastRenewal.Store(started.UnixNano())

	// Runs whose row this node no longer holds stop now.
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
			hb.cfg.Logger.Warn("stopping a run this node no longer owns", "execution_id", id)
			h.cancel(errLeaseLost)
		}
	}
}

// failed stops every run once the renewals have failed for so long that the leases may
// expire before the next one.
func (hb *heartbeat) failed(runs map[string]*handle, err error) {
	since := time.Since(time.Unix(0, hb.lastRenewal.Load()))
	hb.cfg.Logger.Error("renew leases", "error", err, "last_renewed_ago", since)
	if since+hb.cfg.Interval < hb.cfg.Lease {
		return
	}
	for id, h := range runs {
		hb.cfg.Logger.Warn("stopping a run whose lease could not be renewed", "execution_id", id)
		h.cancel(errLeaseLost)
	}
}
