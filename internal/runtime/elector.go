package runtime

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/agentplane/agentplane/internal/background"
	"github.com/agentplane/agentplane/internal/pgbus"
)

// leaderLock elects the node that rescues expired leases: PostgreSQL's session advisory
// lock, or on SQLite the single process.
type leaderLock interface {
	hold(ctx context.Context) (bool, error)
	release()
}

type soleNode struct{}

func (soleNode) hold(context.Context) (bool, error) { return true, nil }
func (soleNode) release()                           {}

type pgLeader struct{ lock *pgbus.Lock }

func (l pgLeader) hold(ctx context.Context) (bool, error) { return l.lock.Hold(ctx) }
func (l pgLeader) release()                               { l.lock.Release() }

// electorConfig is what an elector needs.
type electorConfig struct {
	// Interval is how often the elector holds the lock again and, while this node leads,
	// runs Lead.
	Interval time.Duration
	// Lead does the leader's work (rescues, expired approvals).
	Lead   func(ctx context.Context)
	Logger *slog.Logger
}

// elector keeps this node's place in the leader election: it holds the lock every Interval
// and runs the leader's work while it wins. Two leaders at once (a lock lost unnoticed for a
// moment) do no harm: the leader's work takes rows one transaction at a time, skipping those
// another holds.
type elector struct {
	cfg     electorConfig
	lock    leaderLock // set by elect
	leading atomic.Bool
}

func newElector(cfg electorConfig) *elector { return &elector{cfg: cfg} }

// elect takes part in the election with lock for the first time and reports whether this
// node leads.
func (el *elector) elect(ctx context.Context, lock leaderLock) bool {
	el.lock = lock
	lead, err := lock.hold(ctx)
	if err != nil {
		el.cfg.Logger.Warn("leader election", "error", err)
		return false
	}
	el.leading.Store(lead)
	return lead
}

// run holds the lock again every Interval and runs the leader's work while this node leads,
// until ctx ends.
func (el *elector) run(ctx context.Context) {
	was := false
	background.Every(ctx, el.cfg.Interval, func() bool {
		lead, err := el.lock.hold(ctx)
		if err != nil && ctx.Err() == nil {
			el.cfg.Logger.Warn("leader election", "error", err)
		}
		el.leading.Store(lead)
		if lead != was {
			el.cfg.Logger.Info("leadership changed", "leader", lead)
			was = lead
		}
		if lead {
			el.cfg.Lead(ctx)
		}
		return true
	})
}

// isLeading reports whether this node won its last election.
func (el *elector) isLeading() bool { return el.leading.Load() }

// resign gives up the lead (after run has returned).
func (el *elector) resign() {
	el.leading.Store(false)
	if el.lock != nil {
		el.lock.release()
	}
}
