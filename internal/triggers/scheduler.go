package triggers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentplane/agentplane/internal/background"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/store"
)

// Defaults of SchedulerConfig.
const (
	DefaultPollInterval = time.Second
	// DefaultLateness is how late a tick may be found and still run as on time: a tick found
	// later was missed (every node was down) and runs only as a schedule's catch-up.
	DefaultLateness = time.Minute
	// DefaultRunTimeout bounds a scheduled run, as timeout_ms does an API run.
	DefaultRunTimeout = 300_000
)

// SchedulerConfig is what a Scheduler needs.
type SchedulerConfig struct {
	Store  Store
	Engine *runtime.Engine
	Logger *slog.Logger
	// Now is the clock (default time.Now); tests inject their own.
	Now func() time.Time
	// PollInterval is how often due ticks are looked for (default 1 s).
	PollInterval time.Duration
	// Lateness is how late a tick may run and count as on time (default 1 min).
	Lateness time.Duration
	// BeforeCreate, when set, runs in the transaction that records a tick's execution (the
	// server checks its plan limits there); its error leaves the tick unclaimed for now.
	BeforeCreate func(ctx context.Context, tx *store.Store, ws string) error
	// Replier, when set, is swept at every poll: it sends the chat platform replies whose
	// sender failed or stopped.
	Replier *Replier
}

// Scheduler fires the ticks of schedule triggers. Every node runs one; a tick is claimed
// with a compare-and-set on the trigger's next_run_at in the transaction that records its
// execution, so of all the nodes sharing a database exactly one runs it.
type Scheduler struct {
	cfg SchedulerConfig

	task background.Task
}

// NewScheduler returns a scheduler; Start runs it.
func NewScheduler(cfg SchedulerConfig) *Scheduler {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.Lateness <= 0 {
		cfg.Lateness = DefaultLateness
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Scheduler{cfg: cfg}
}

// Start runs the scheduler's loop in the background until Stop. A second Start while it runs
// does nothing.
func (s *Scheduler) Start(ctx context.Context) { s.task.Start(ctx, s.loop) }

// Stop ends the loop and waits for a tick in progress. Safe to call more than once, and
// without Start.
func (s *Scheduler) Stop() { s.task.Stop() }

func (s *Scheduler) loop(ctx context.Context) {
	t := time.NewTicker(s.cfg.PollInterval)
	defer t.Stop()
	var pruned time.Time
	for {
		if _, err := s.Tick(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Warn("schedule tick failed", slog.Any("error", err))
		}
		if s.cfg.Replier != nil {
			if _, err := s.cfg.Replier.Sweep(ctx); err != nil && ctx.Err() == nil {
				s.cfg.Logger.Warn("reply sweep failed", slog.Any("error", err))
			}
		}
		if now := s.cfg.Now(); now.Sub(pruned) > time.Hour {
			if _, err := s.cfg.Store.TriggerEventsPrune(ctx, now); err != nil && ctx.Err() == nil {
				s.cfg.Logger.Warn("pruning trigger events failed", slog.Any("error", err))
			}
			if _, err := s.cfg.Store.TriggerRepliesPrune(ctx, now); err != nil && ctx.Err() == nil {
				s.cfg.Logger.Warn("pruning trigger replies failed", slog.Any("error", err))
			}
			pruned = now
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Tick fires every tick due at the scheduler's now and returns how many runs it started.
func (s *Scheduler) Tick(ctx context.Context) (int, error) {
	now := s.cfg.Now()
	due, err := s.cfg.Store.TriggersDue(ctx, now, 100)
	if err != nil {
		return 0, err
	}
	fired := 0
	var errs []error
	for _, t := range due {
		ok, err := s.fire(ctx, t, now)
		if err != nil {
			errs = append(errs, fmt.Errorf("schedule %s: %w", t.ID, err))
		}
		if ok {
			fired++
		}
	}
	return fired, errors.Join(errs...)
}

// maxSkip bounds the walk over missed ticks (a minutely schedule down for a year is
// 525600): past it, the tick reached is taken as the latest.
const maxSkip = 1_000_000

// fire handles one due schedule: the latest tick at or before now runs when it is on time
// (within Lateness) or, when it was missed, once if the schedule catches up; either way the
// schedule moves to its first tick after now.
func (s *Scheduler) fire(ctx context.Context, t *domain.Trigger, now time.Time) (bool, error) {
	old := t.NextRunAt.Time
	cronExpr, _ := t.Config["cron"].(string)
	tz, _ := t.Config["timezone"].(string)
	catchUp, _ := t.Config["catch_up"].(bool)
	sch, err := ParseSchedule(cronExpr, tz)
	if err != nil {
		return false, err
	}
	latest := old
	for range maxSkip {
		n := sch.Next(latest)
		if n.IsZero() || n.After(now) {
			break
		}
		latest = n
	}
	next := sch.Next(now)
	if next.IsZero() {
		next = now.Add(100 * 365 * 24 * time.Hour) // never again
	}
	if now.Sub(latest) > s.cfg.Lateness && !catchUp {
		// Missed while every node was down: skipped.
		s.cfg.Logger.Info("schedule ticks missed; skipping to the next", slog.String("trigger_id", t.ID),
			slog.Time("missed", latest), slog.Time("next", next))
		return false, ignoreTaken(s.cfg.Store.TriggerTickClaim(ctx, t.ID, old, next, nil))
	}
	tick := latest
	err = s.start(ctx, t, tick, func(ctx context.Context, tx *store.Store) error {
		return tx.TriggerTickClaim(ctx, t.ID, old, next, &tick)
	})
	if errors.Is(err, domain.ErrTickTaken) {
		return false, nil // another node ran it
	}
	if err != nil {
		// The run cannot start (no active version, input no longer valid, no model
		// credential, plan limit): the tick passes without a run rather than being retried
		// every second.
		s.cfg.Logger.Warn("scheduled run not started", slog.String("trigger_id", t.ID), slog.Time("tick", tick), slog.Any("error", err))
		return false, ignoreTaken(s.cfg.Store.TriggerTickClaim(ctx, t.ID, old, next, nil))
	}
	return true, nil
}

func ignoreTaken(err error) error {
	if errors.Is(err, domain.ErrTickTaken) {
		return nil
	}
	return err
}

// start records and queues the run of one tick; claim runs in the same transaction.
func (s *Scheduler) start(ctx context.Context, t *domain.Trigger, tick time.Time, claim func(ctx context.Context, tx *store.Store) error) error {
	a, versionID, cfg, err := Target(ctx, s.cfg.Store, t)
	if err != nil {
		return err
	}
	input := map[string]any(t.Input)
	if input == nil {
		input = map[string]any{}
	}
	if err := cfg.CheckInput(input); err != nil {
		return err
	}
	_, _, err = s.cfg.Engine.Submit(ctx, runtime.SubmitRequest{WorkspaceID: t.WorkspaceID, Agent: a, VersionID: versionID, Config: cfg,
		Input: input, Metadata: map[string]any{"trigger_id": t.ID, "scheduled_at": tick.UTC().Format(time.RFC3339)}, Source: "schedule",
		TimeoutMS: DefaultRunTimeout, Async: true,
		BeforeCreate: runtime.SQLHook(func(ctx context.Context, tx *store.Store, _ *domain.Execution) error {
			if err := claim(ctx, tx); err != nil {
				return err
			}
			if s.cfg.BeforeCreate != nil {
				return s.cfg.BeforeCreate(ctx, tx, t.WorkspaceID)
			}
			return nil
		})})
	return err
}

// Target resolves what a trigger runs: its agent, the version (the trigger's, else the
// active one) and that version's config. An agent without a runnable version is a
// *store.ConflictError.
func Target(ctx context.Context, st Store, t *domain.Trigger) (*domain.Agent, *string, *domain.AgentConfig, error) {
	a, err := st.AgentGet(ctx, t.WorkspaceID, t.AgentID)
	if err != nil {
		return nil, nil, nil, err
	}
	if t.VersionID != nil {
		v, err := st.AgentVersionGet(ctx, t.WorkspaceID, a.ID, *t.VersionID)
		if err != nil {
			return nil, nil, nil, err
		}
		return a, &v.ID, &v.Config, nil
	}
	if a.Config == nil {
		return nil, nil, nil, &store.ConflictError{Message: fmt.Sprintf("agent %s has no active version; create and promote one first", a.ID)}
	}
	return a, a.ActiveVersionID, a.Config, nil
}
