package eval

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentplane/agentplane/internal/background"
	"github.com/agentplane/agentplane/internal/claimloop"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// Online evaluation defaults.
const (
	// DefaultOnlinePoll is how often an idle judge looks for due judgments.
	DefaultOnlinePoll = time.Second
	// DefaultOnlineConcurrency is how many judgments one node makes at once.
	DefaultOnlineConcurrency = 4
	// DefaultJudgmentLease is how long a claimed judgment stays this node's without a
	// renewal: the node renews it while judging, so a judgment in progress is never taken by
	// another node, and one whose node died is taken over this long after.
	DefaultJudgmentLease = 30 * time.Second
	// MaxJudgmentAttempts is how many times a judgment is tried before it fails for good.
	MaxJudgmentAttempts = 5
	// judgmentTimeout bounds one attempt (a judge model call is bounded at two minutes).
	judgmentTimeout = 3 * time.Minute
)

// judgmentBackoff is the pause after the n-th failed attempt.
var judgmentBackoff = []time.Duration{10 * time.Second, time.Minute, 5 * time.Minute, 15 * time.Minute}

// OnlineConfig is what an Online judge needs.
type OnlineConfig struct {
	Store  *store.Store
	Judge  JudgeFunc // the engine's Judge: llm_judge evaluators call models through it
	Logger *slog.Logger
	// Node names this process in the leases of the judgments it makes.
	Node string
	// Now is the clock of schedules (time.Now when nil); tests move it.
	Now func() time.Time
	// Poll is how often an idle judge looks for due judgments (DefaultOnlinePoll when zero).
	Poll time.Duration
	// Concurrency is how many judgments run at once (DefaultOnlineConcurrency when zero).
	Concurrency int
	// Lease is how long a claimed judgment stays this node's without a renewal
	// (DefaultJudgmentLease when zero); Heartbeat how often it is renewed while judging (a
	// third of Lease when zero).
	Lease, Heartbeat time.Duration
}

// Online scores finished executions by the workspace's evaluation rules. As the store's
// terminal hook it records the judgments a run calls for in the transaction that ends the
// run (so none is lost, and the run's answer waits on no model); its loop claims due
// judgments under a lease on any node and writes each score in the transaction that settles
// the judgment (so none is made twice).
type Online struct {
	cfg  OnlineConfig
	st   *store.Store
	log  *slog.Logger
	loop *claimloop.Loop[*domain.Judgment]
}

// NewOnline returns an Online judge and installs its judgment writer as a terminal hook of
// the store.
func NewOnline(cfg OnlineConfig) *Online {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultOnlinePoll
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultOnlineConcurrency
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultJudgmentLease
	}
	if cfg.Heartbeat <= 0 || cfg.Heartbeat > cfg.Lease/3 {
		cfg.Heartbeat = cfg.Lease / 3
	}
	if cfg.Node == "" {
		cfg.Node = "judge-" + store.NewID()
	}
	o := &Online{cfg: cfg, st: cfg.Store, log: cfg.Logger.With("component", "online-eval")}
	o.loop = claimloop.New(claimloop.Config[*domain.Judgment]{Slots: cfg.Concurrency, Poll: cfg.Poll, Claim: o.claim,
		Attempt: o.attempt, Logger: o.log, What: "judgments"})
	cfg.Store.SetNamedTerminalHook("online-eval", o.enqueue)
	return o
}

// enqueue records, in the transaction that ends an execution, a judgment for each enabled
// rule that matches it and samples it. Child executions (steps, sub-agents) are part of
// their root's run and are not scored on their own.
func (o *Online) enqueue(ctx context.Context, tx *store.Store, x *domain.Execution) error {
	if x.ParentID != nil {
		return nil
	}
	rules, err := tx.EvaluationRulesFor(ctx, x.WorkspaceID, x.AgentID)
	if err != nil {
		return err
	}
	added := false
	for _, r := range rules {
		if !Matches(r, x) || !Sampled(r.ID, x.ID, r.Sampling) {
			continue
		}
		if err := tx.JudgmentCreate(ctx, x.WorkspaceID, r.ID, x.ID); err != nil {
			return err
		}
		added = true
	}
	if added {
		o.loop.Nudge()
	}
	return nil
}

// Start runs the judging loop until Stop. Calling it again does nothing.
func (o *Online) Start(context.Context) { o.loop.Start() }

// Stop ends the loop, lets judgments in progress finish until ctx ends, then cancels the
// rest (their leases expire and any node judges them again). The store hook stays: runs that
// end after Stop still record their judgments. Safe to call twice.
func (o *Online) Stop(ctx context.Context) { o.loop.Stop(ctx) }

// claim takes at most limit due judgments (by the configured clock) for this node.
func (o *Online) claim(ctx context.Context, limit int) ([]*domain.Judgment, error) {
	return o.st.JudgmentClaim(ctx, o.cfg.Node, o.cfg.Now(), o.cfg.Lease, limit)
}

// RunDue claims every judgment due now (by the configured clock), makes them and waits for
// the outcomes; it returns how many attempts it made. Tests drive online evaluation with it.
func (o *Online) RunDue(ctx context.Context) (int, error) { return o.loop.RunDue(ctx, 100) }

// attempt makes one claimed judgment and records the outcome: the score, a retry later, or
// (a case the evaluator cannot judge, or the last attempt) a failure.
func (o *Online) attempt(ctx context.Context, j *domain.Judgment) {
	ctx, cancel := context.WithTimeout(ctx, judgmentTimeout)
	defer cancel()
	defer o.keepLease(ctx, cancel, j)()
	sc, err := o.judge(ctx, j)
	wctx := context.WithoutCancel(ctx)
	log := o.log.With("judgment_id", j.ID, "rule_id", j.RuleID, "execution_id", j.ExecutionID, "attempt", j.Attempts)
	if err == nil {
		var held bool
		held, err = o.st.JudgmentComplete(wctx, j.ID, o.cfg.Node, j.Attempts, sc)
		if err == nil {
			if !held {
				log.Warn("judgment no longer held (another node took it over after its lease, or its rule or run was deleted); nothing written")
			}
			return
		}
		// The score and the settled judgment commit together or not at all: the failure
		// is recorded below like a failed judgment (a score its config now refuses fails for
		// good; a database error is retried).
	}
	var next time.Time
	if !permanent(err) && j.Attempts < MaxJudgmentAttempts {
		next = o.cfg.Now().Add(judgmentBackoff[min(j.Attempts, len(judgmentBackoff))-1])
	}
	held, rerr := o.st.JudgmentRecordFailure(wctx, j.ID, o.cfg.Node, j.Attempts, err.Error(), next)
	switch {
	case rerr != nil:
		log.Error("record failed judgment", "error", rerr, "cause", err)
	case !held:
		log.Warn("failed judgment no longer held (taken over, or its rule or run was deleted)", "error", err)
	case next.IsZero():
		log.Warn("judgment failed", "error", err)
	default:
		log.Info("judgment failed; retrying", "error", err, "next_attempt_at", next)
	}
}

// keepLease renews the lease of a judgment being made every Heartbeat until the returned
// function is called; if the lease is lost (the database was out of reach past its end and
// another node took the judgment), it cancels the attempt: its score would not be written.
func (o *Online) keepLease(ctx context.Context, cancel context.CancelFunc, j *domain.Judgment) (stop func()) {
	ctx, done := context.WithCancel(ctx)
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		background.Every(ctx, o.cfg.Heartbeat, func() bool {
			held, err := o.st.JudgmentRenew(ctx, j.ID, o.cfg.Node, j.Attempts, o.cfg.Lease)
			if err != nil {
				o.log.Warn("renew judgment lease", "judgment_id", j.ID, "error", err)
				return true
			}
			if !held {
				cancel()
			}
			return held
		})
	}()
	return func() { done(); <-exited }
}

// permanent reports whether an error says the case cannot be judged at all (no output to
// compare, a rule or evaluator gone): trying again would fail the same way.
func permanent(err error) bool {
	var v *store.ValidationError
	var ref *store.ReferenceError
	return errors.As(err, &v) || errors.As(err, &ref) || store.IsNotFound(err)
}

// judge scores the judgment's execution with its rule's evaluator and returns the score to
// write (not yet written).
func (o *Online) judge(ctx context.Context, j *domain.Judgment) (*domain.Score, error) {
	rule, err := o.st.EvaluationRuleGet(ctx, j.WorkspaceID, j.RuleID)
	if err != nil {
		return nil, err
	}
	ev, err := o.st.EvaluatorGet(ctx, j.WorkspaceID, rule.EvaluatorID)
	if err != nil {
		return nil, err
	}
	x, err := o.st.ExecutionGet(ctx, j.WorkspaceID, j.ExecutionID)
	if err != nil {
		return nil, err
	}
	res, err := Run(ctx, o.st, o.cfg.Judge, ev, Case{Input: x.Input, Output: x.Output, Metadata: x.Metadata})
	if err != nil {
		return nil, fmt.Errorf("evaluator %s (%s): %w", ev.Name, ev.ID, err)
	}
	meta := domain.JSONObject{"evaluator_id": ev.ID}
	if res.TraceID != nil {
		meta["judge_trace_id"], meta["cost"], meta["total_tokens"] = *res.TraceID, res.Cost, res.TokenUsage.TotalTokens
	}
	return &domain.Score{WorkspaceID: j.WorkspaceID, Name: res.Name, ConfigID: res.ConfigID, DataType: res.DataType, Value: res.Value,
		StringValue: res.StringValue, ExecutionID: &x.ID, Source: domain.ScoreSourceEval, RuleID: &rule.ID, Comment: res.Comment, Metadata: meta}, nil
}
