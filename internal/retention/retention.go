// Package retention deletes expired history: the executions and ingested traces of each
// workspace older than its retention_days, and every row of a deleted workspace. It is a job of
// the elected leader (runtime.Engine.Leading), run every Interval in small transactions.
package retention

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentplane/agentplane/internal/background"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// Defaults of Config.
const (
	DefaultInterval = time.Minute
	// DefaultBatch is how many execution trees (or traces, or rows of a deleted workspace) one
	// transaction deletes: small enough that no lock is held long, on either dialect
	// (BenchmarkExecutionsPurge in internal/store: about 80 ms on SQLite and 200 ms on
	// PostgreSQL for 500 runs with frames, trace, spans and a score, on a loaded 2-core box).
	DefaultBatch = 500
)

// Config is what a Purger needs.
type Config struct {
	Store *store.Store
	// DeleteAsset deletes one asset of a deleted workspace with its blob (assets.Service.Delete);
	// nil deletes the rows only (tests without a blob store).
	DeleteAsset func(ctx context.Context, ws, id string) error
	// Cancel cancels a run of a deleted workspace that has not ended (runtime.Engine.Cancel):
	// its rows are deleted once it has stopped. nil leaves such a workspace until they end.
	Cancel func(ctx context.Context, ws, id string) error
	// Leader reports whether this node leads; passes run only then. nil: always (one node).
	Leader func() bool
	Logger *slog.Logger
	// Interval is the time between passes (default DefaultInterval); Batch the rows (or
	// execution trees) per transaction (default DefaultBatch).
	Interval time.Duration
	Batch    int
	// MaxDays is the server's ceiling on retention (--max-retention-days): a workspace keeping
	// history longer (or forever) is purged as if it kept MaxDays. 0: no ceiling.
	MaxDays int
	// Now is the clock (default time.Now); tests move it.
	Now func() time.Time
}

// Purger runs the retention passes.
type Purger struct {
	cfg  Config
	task background.Task
}

// New returns a Purger; Start runs it.
func New(cfg Config) *Purger {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Purger{cfg: cfg}
}

// Start runs a pass every Interval while this node leads, in the background until Stop. A
// second Start while it runs does nothing.
func (p *Purger) Start(ctx context.Context) { p.task.Start(ctx, p.loop) }

// Stop ends the loop and waits for a pass in progress (its current transaction is rolled
// back). Safe to call more than once, and without Start.
func (p *Purger) Stop() { p.task.Stop() }

func (p *Purger) loop(ctx context.Context) {
	background.Every(ctx, p.cfg.Interval, func() bool {
		if p.cfg.Leader != nil && !p.cfg.Leader() {
			return true
		}
		if _, err := p.Pass(ctx); err != nil && ctx.Err() == nil {
			p.cfg.Logger.Error("retention purge", slog.Any("error", err))
		}
		return true
	})
}

// Result is what one pass deleted.
type Result struct {
	domain.PurgeCounts
	// Workspaces is how many deleted workspaces were removed entirely; Pending how many
	// still wait for runs to stop.
	Workspaces, Pending int
	// Rows counts the other rows of deleted workspaces (agents, keys, sessions …), Assets
	// their assets.
	Rows, Assets int
}

// Pass deletes what has expired now and the rows of deleted workspaces, batch by batch, and
// logs one line with the counts. An error stops the pass; the next one takes up from there.
func (p *Purger) Pass(ctx context.Context) (Result, error) {
	var r Result
	started := time.Now()
	err := p.expire(ctx, &r)
	if err == nil {
		err = p.deleted(ctx, &r)
	}
	p.cfg.Logger.Info("retention purge", slog.Int("executions", r.Executions), slog.Int("frames", r.Events),
		slog.Int("traces", r.Traces), slog.Int("spans", r.Spans), slog.Int("scores", r.Scores), slog.Int("approvals", r.Approvals),
		slog.Int("webhook_deliveries", r.Deliveries), slog.Int("workspaces_deleted", r.Workspaces), slog.Int("workspaces_pending", r.Pending),
		slog.Int("workspace_rows", r.Rows), slog.Int("assets", r.Assets), slog.Duration("took", time.Since(started)))
	return r, err
}

// Days is the retention a workspace keeping days gets under the ceiling maxDays (0: none):
// 0 (forever) or more than the ceiling is the ceiling.
func Days(days, maxDays int) int {
	if maxDays > 0 && (days == 0 || days > maxDays) {
		return maxDays
	}
	return days
}

// expire deletes the executions and ingested traces past each live workspace's retention.
func (p *Purger) expire(ctx context.Context, r *Result) error {
	wss, err := p.cfg.Store.WorkspaceRetentionList(ctx)
	if err != nil {
		return err
	}
	now := p.cfg.Now()
	for _, w := range wss {
		days := Days(w.Days, p.cfg.MaxDays)
		if days == 0 {
			continue
		}
		if err := p.history(ctx, w.ID, now.Add(-time.Duration(days)*24*time.Hour), r); err != nil {
			return err
		}
	}
	return nil
}

// history deletes the ended executions and the ingested traces of ws created before `before`.
func (p *Purger) history(ctx context.Context, ws string, before time.Time, r *Result) error {
	for {
		c, err := p.cfg.Store.ExecutionsPurge(ctx, ws, before, p.cfg.Batch)
		if err != nil {
			return err
		}
		r.Add(c)
		if c.Executions == 0 {
			break
		}
	}
	for {
		c, err := p.cfg.Store.TracesPurge(ctx, ws, before, p.cfg.Batch)
		if err != nil {
			return err
		}
		r.Add(c)
		if c.Traces == 0 {
			return nil
		}
	}
}

// deleted removes the deleted workspaces, oldest deletion first.
func (p *Purger) deleted(ctx context.Context, r *Result) error {
	ids, err := p.cfg.Store.WorkspaceListDeleted(ctx, 100)
	if err != nil {
		return err
	}
	for _, ws := range ids {
		gone, err := p.workspace(ctx, ws, r)
		if err != nil {
			return err
		}
		if gone {
			r.Workspaces++
			p.cfg.Logger.Info("deleted workspace purged", slog.String("workspace_id", ws))
		} else {
			r.Pending++
		}
	}
	return nil
}

// farFuture is a cut-off after every execution: a deleted workspace's history all goes.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// workspace deletes the rows of deleted workspace ws, then the workspace; false when runs
// of it have not stopped yet (they are cancelled: the next pass goes on).
func (p *Purger) workspace(ctx context.Context, ws string, r *Result) (bool, error) {
	active, err := p.cfg.Store.ExecutionsActiveList(ctx, ws, p.cfg.Batch)
	if err != nil {
		return false, err
	}
	if len(active) > 0 {
		for _, id := range active {
			if p.cfg.Cancel == nil {
				break
			}
			// A run that ended meanwhile refuses the cancel; what still runs is looked at below.
			if err := p.cfg.Cancel(ctx, ws, id); err != nil {
				if ctx.Err() != nil {
					return false, ctx.Err()
				}
				p.cfg.Logger.Warn("cancel a run of a deleted workspace", slog.String("workspace_id", ws), slog.String("execution_id", id), slog.Any("error", err))
			}
		}
		if active, err = p.cfg.Store.ExecutionsActiveList(ctx, ws, 1); err != nil || len(active) > 0 {
			return false, err
		}
	}
	if err := p.history(ctx, ws, farFuture, r); err != nil {
		return false, err
	}
	for {
		ids, err := p.cfg.Store.AssetIDList(ctx, ws, p.cfg.Batch)
		if err != nil || len(ids) == 0 {
			if err != nil {
				return false, err
			}
			break
		}
		for _, id := range ids {
			if err := p.deleteAsset(ctx, ws, id); err != nil && !store.IsNotFound(err) {
				return false, fmt.Errorf("delete asset %s of deleted workspace %s: %w", id, ws, err)
			}
			r.Assets++
		}
	}
	for {
		n, done, err := p.cfg.Store.WorkspacePurge(ctx, ws, p.cfg.Batch)
		r.Rows += n
		if err != nil || done {
			return done, err
		}
	}
}

func (p *Purger) deleteAsset(ctx context.Context, ws, id string) error {
	if p.cfg.DeleteAsset != nil {
		return p.cfg.DeleteAsset(ctx, ws, id)
	}
	_, _, err := p.cfg.Store.AssetDelete(ctx, ws, id)
	return err
}
