// Package experiment runs experiments: an agent version on every item of a dataset, each
// item as an execution of the engine, each run scored by the experiment's evaluators.
//
// Every node runs a Runner. An experiment is driven by one node at a time, the holder of its
// lease in the database (renewed while it runs); when that node stops, another takes the
// experiment over once the lease expires and goes on from where it was. An item starts once:
// its execution is created in the transaction that links it to the item, only while the item
// has none. The run starts on the driving node with runtime.SubmitRequest.Requeue: if that
// node dies before the run's first model call, the engine queues it again and it runs on
// another node; if it dies after, the run fails as interrupted (whether its request reached
// the model cannot be known, but its answer never reached the platform) and the node driving
// the experiment runs the item again as a new execution, linked in the transaction that
// creates it only while the item still points at the interrupted one, up to
// domain.ItemMaxAttempts executions. Its scores are written once, in the transaction that
// records its outcome.
package experiment

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/agentplane/agentplane/internal/background"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/store"
)

// Defaults of Config.
const (
	DefaultLease        = 30 * time.Second
	DefaultPollInterval = time.Second
)

// claimBatch bounds the experiments one look at the table takes.
const claimBatch = 10

// Config is what a Runner needs.
type Config struct {
	Store  *store.Store
	Engine *runtime.Engine
	Logger *slog.Logger
	// Lease is how long an experiment stays this node's without a renewal (renewed every
	// third of it); PollInterval how often the node looks for experiments to drive (new
	// ones wake it at once through Wake).
	Lease, PollInterval time.Duration
	// BeforeCreate, when set, runs in the transaction recording each item's execution (the
	// server's plan limits); its error fails the item.
	BeforeCreate func(ctx context.Context, tx *store.Store, ws string) error
}

// Runner drives the experiments this node holds the lease of.
type Runner struct {
	cfg  Config
	node string

	task   background.Task
	mu     sync.Mutex
	wake   chan struct{}
	owned  map[string]bool // experiments driven by this node now
	drives sync.WaitGroup
}

// NewRunner returns a runner; Start runs it.
func NewRunner(cfg Config) *Runner {
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Runner{cfg: cfg, node: cfg.Engine.Node(), wake: make(chan struct{}, 1), owned: map[string]bool{}}
}

// Start runs the runner in the background until Stop. A second Start while it runs does
// nothing.
func (r *Runner) Start(ctx context.Context) { r.task.Start(ctx, r.loop) }

// Stop stops driving experiments: nothing more is started, the leases are given up so that
// another node (or this one, restarted) goes on with them, and runs in progress are left to
// the engine. Safe to call more than once, and without Start.
func (r *Runner) Stop() {
	r.task.Stop()
	r.drives.Wait()
}

// Wake makes the runner look for experiments to drive now (one was just created).
func (r *Runner) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *Runner) loop(ctx context.Context) {
	t := time.NewTicker(r.cfg.PollInterval)
	defer t.Stop()
	for {
		r.claim(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.wake:
		}
	}
}

// claim takes the experiments whose lease is free and drives each in the background.
func (r *Runner) claim(ctx context.Context) {
	xs, err := r.cfg.Store.ExperimentClaim(ctx, r.node, r.cfg.Lease, claimBatch)
	if err != nil {
		if ctx.Err() == nil {
			r.cfg.Logger.Warn("claim experiments", slog.Any("error", err))
		}
		return
	}
	for _, x := range xs {
		r.mu.Lock()
		if r.owned[x.ID] {
			r.mu.Unlock()
			continue
		}
		r.owned[x.ID] = true
		r.mu.Unlock()
		r.drives.Go(func() {
			defer func() {
				r.mu.Lock()
				delete(r.owned, x.ID)
				r.mu.Unlock()
			}()
			newDrive(r, x).run(ctx)
		})
	}
}
