// Package rollup packs the trace rollups' latency bins: a job of the elected leader
// (runtime.Engine.Leading) that moves the bin rows the traces' triggers write, one per
// duration bin, into one packed row per workspace, agent, model and period
// (store.TraceRollupPack), every Interval, so that the trace summary reads about one row per
// agent and period, whatever the runs.
package rollup

import (
	"context"
	"log/slog"
	"time"

	"github.com/agentplane/agentplane/internal/background"
	"github.com/agentplane/agentplane/internal/store"
)

// Defaults of Config.
const (
	// DefaultInterval bounds what the summary reads beyond the packed rows: the bin rows of
	// the runs of the last 30 s, at most one per bin (a few hundred for a busy agent's hour).
	DefaultInterval = 30 * time.Second
	// DefaultBatch is how many groups one listing of the pass reads (each is packed in a
	// transaction of its own).
	DefaultBatch = 100
)

// Config is what a Packer needs.
type Config struct {
	Store *store.Store
	// Leader reports whether this node leads; passes run only then. nil: always (one node).
	Leader func() bool
	Logger *slog.Logger
	// Interval is the time between passes (default DefaultInterval); Batch the groups listed
	// at a time (default DefaultBatch).
	Interval time.Duration
	Batch    int
}

// Packer runs the packing passes.
type Packer struct {
	cfg  Config
	task background.Task
}

// New returns a Packer; Start runs it.
func New(cfg Config) *Packer {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Packer{cfg: cfg}
}

// Start runs a pass every Interval while this node leads, in the background until Stop. A
// second Start while it runs does nothing.
func (p *Packer) Start(ctx context.Context) { p.task.Start(ctx, p.loop) }

// Stop ends the loop and waits for a pass in progress (its current transaction is rolled
// back). Safe to call more than once, and without Start.
func (p *Packer) Stop() { p.task.Stop() }

func (p *Packer) loop(ctx context.Context) {
	background.Every(ctx, p.cfg.Interval, func() bool {
		if p.cfg.Leader != nil && !p.cfg.Leader() {
			return true
		}
		if err := p.Pass(ctx); err != nil && ctx.Err() == nil {
			p.cfg.Logger.Error("pack trace rollups", slog.Any("error", err))
		}
		return true
	})
}

// Pass packs the bin rows of every group that has some (writing the packed row's percentiles),
// fills in the percentiles of packed rows that have none, and logs (at debug level) how many
// packed rows it wrote and bin rows it packed. An error stops the pass; the next one takes up from there.
func (p *Packer) Pass(ctx context.Context) error {
	started := time.Now()
	groups, bins, err := p.cfg.Store.TraceRollupPack(ctx, p.cfg.Batch)
	p.cfg.Logger.Debug("trace rollups packed", slog.Int("groups", groups), slog.Int("bins", bins), slog.Duration("took", time.Since(started)))
	return err
}
