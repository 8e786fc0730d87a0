package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/agentplane/agentplane/internal/background"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/eval"
	"github.com/agentplane/agentplane/internal/runtime"
	"github.com/agentplane/agentplane/internal/store"
	"github.com/agentplane/agentplane/internal/triggers"
)

// Source is the source of the executions an experiment starts.
const Source = "experiment"

// pendingBatch is how many pending items one read takes.
const pendingBatch = 64

// awaitPoll is how often an item whose execution another node started is looked at again.
const awaitPoll = 200 * time.Millisecond

// drive is one experiment driven by this node: at most Concurrency items in flight.
type drive struct {
	r          *Runner
	x          *domain.Experiment
	agent      *domain.Agent
	version    *domain.AgentVersion
	evaluators []*domain.Evaluator
	// slots bound the items whose executions run; scoring the evaluators' work on those that
	// ended, so that a slow judge does not hold a run's slot.
	slots, scoring chan struct{}
	inflight       sync.WaitGroup
}

func newDrive(r *Runner, x *domain.Experiment) *drive {
	n := max(x.Concurrency, 1)
	return &drive{r: r, x: x, slots: make(chan struct{}, n), scoring: make(chan struct{}, n)}
}

// run drives the experiment until every item finished, it is cancelled, the lease is lost,
// or the runner stops (then the lease is given up).
func (d *drive) run(parent context.Context) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	st, log := d.r.cfg.Store, d.r.cfg.Logger.With(slog.String("experiment_id", d.x.ID))

	// Renew the lease while driving; losing it (cancelled, or taken over) stops the drive.
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		d.renew(ctx, cancel, log)
	}()
	defer func() { cancel(); <-renewed }()

	if msg := d.load(ctx); msg != "" {
		d.finish(ctx, domain.ExperimentFailed, &msg, log)
		return
	}

	// Items a previous owner started: wait for their executions, then score them.
	running, err := st.ExperimentItemsByStatus(ctx, d.x.ID, domain.ItemRunning, 0)
	if err != nil {
		log.Warn("read running items", slog.Any("error", err))
		return
	}
	for _, it := range running {
		if !d.acquire(ctx) {
			break
		}
		d.inflight.Go(func() { d.follow(ctx, it, nil) })
	}
	d.dispatchAll(ctx, log)
	d.inflight.Wait()

	if parent.Err() != nil {
		// The runner stops: another node (or this one, restarted) goes on.
		if err := st.ExperimentRelease(context.WithoutCancel(ctx), d.x.ID, d.r.node); err != nil {
			log.Warn("release experiment", slog.Any("error", err))
		}
		return
	}
	if ctx.Err() == nil {
		d.finish(ctx, domain.ExperimentCompleted, nil, log)
	}
}

// load reads the agent version and the evaluators; what is gone is the experiment's failure.
func (d *drive) load(ctx context.Context) string {
	st, ws := d.r.cfg.Store, d.x.WorkspaceID
	var err error
	if d.agent, err = st.AgentGet(ctx, ws, d.x.AgentID); err != nil {
		return fmt.Sprintf("agent %s is no longer available: %v", d.x.AgentID, err)
	}
	if d.version, err = st.AgentVersionGet(ctx, ws, d.x.AgentID, d.x.VersionID); err != nil {
		return fmt.Sprintf("agent version %s is no longer available: %v", d.x.VersionID, err)
	}
	for _, id := range d.x.EvaluatorIDs {
		ev, err := st.EvaluatorGet(ctx, ws, id)
		if err != nil {
			return fmt.Sprintf("evaluator %s is no longer available: %v", id, err)
		}
		d.evaluators = append(d.evaluators, ev)
	}
	return ""
}

// renew keeps the lease until ctx ends; a renewal refused cancels the drive.
func (d *drive) renew(ctx context.Context, cancel context.CancelFunc, log *slog.Logger) {
	background.Every(ctx, d.r.cfg.Lease/3, func() bool {
		ok, err := d.r.cfg.Store.ExperimentRenew(ctx, d.x.ID, d.r.node, d.r.cfg.Lease)
		if err != nil {
			log.Warn("renew experiment lease", slog.Any("error", err))
			return true
		}
		if !ok {
			log.Info("experiment no longer held by this node (cancelled, or taken over)")
			cancel()
			return false
		}
		return true
	})
}

func (d *drive) acquire(ctx context.Context) bool {
	select {
	case d.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (d *drive) release() { <-d.slots }

// dispatchAll starts the pending items in order, Concurrency at a time. Each start runs on
// its own goroutine, so that the items started together are recorded together.
func (d *drive) dispatchAll(ctx context.Context, log *slog.Logger) {
	after := -1
	for ctx.Err() == nil {
		items, err := d.r.cfg.Store.ExperimentItemsPending(ctx, d.x.ID, after, pendingBatch)
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("read pending items", slog.Any("error", err))
			}
			return
		}
		if len(items) == 0 {
			return
		}
		for _, it := range items {
			after = it.Position
			if !d.acquire(ctx) {
				return
			}
			d.inflight.Go(func() {
				w, ok := d.dispatch(ctx, it, log)
				if !ok {
					d.release()
					return
				}
				d.follow(ctx, it, w)
			})
		}
	}
}

// dispatch creates an item's execution, linked to the item in the same transaction, and
// returns its waiter; false when nothing was started.
func (d *drive) dispatch(ctx context.Context, it *domain.ExperimentItem, log *slog.Logger) (*runtime.Waiter, bool) {
	st := d.r.cfg.Store
	input := map[string]any(it.Input)
	err := d.version.Config.CheckInput(input)
	var w *runtime.Waiter
	if err == nil {
		w, err = d.submit(ctx, it, func(ctx context.Context, tx *store.Store, x *domain.Execution) error {
			return tx.ExperimentItemAttach(ctx, d.x.ID, it.ItemID, x.ID)
		})
	}
	switch {
	case errors.Is(err, domain.ErrItemTaken) || ctx.Err() != nil:
		return nil, false
	case err != nil:
		// The item cannot run (its input fails the schema, the model cannot be routed): it
		// fails without an execution.
		msg := err.Error()
		if _, err := st.ExperimentItemFinish(ctx, d.x.ID, it.ItemID, domain.ItemPending, domain.ItemOutcome{Status: domain.ItemFailed, Error: &msg}, nil); err != nil {
			log.Warn("record item that could not start", slog.String("item_id", it.ItemID), slog.Any("error", err))
		}
		return nil, false
	}
	it.Attempts = 1
	return w, true
}

// submit starts an execution of the item, link (in the transaction that records it, after
// the server's plan limits) tying it to the item; it.ExecutionID is the new one's on success.
func (d *drive) submit(ctx context.Context, it *domain.ExperimentItem, link func(context.Context, *store.Store, *domain.Execution) error) (*runtime.Waiter, error) {
	ws := d.x.WorkspaceID
	x, w, err := d.r.cfg.Engine.Submit(ctx, runtime.SubmitRequest{WorkspaceID: ws, Agent: d.agent, VersionID: &d.version.ID,
		Config: &d.version.Config, Input: map[string]any(it.Input), Source: Source, TimeoutMS: triggers.DefaultRunTimeout, Requeue: true,
		Metadata: map[string]any{"experiment_id": d.x.ID, "dataset_id": d.x.DatasetID, "dataset_item_id": it.ItemID},
		BeforeCreate: runtime.SQLHook(func(ctx context.Context, tx *store.Store, x *domain.Execution) error {
			if d.r.cfg.BeforeCreate != nil {
				if err := d.r.cfg.BeforeCreate(ctx, tx, ws); err != nil {
					return err
				}
			}
			return link(ctx, tx, x)
		})})
	if err != nil {
		return nil, err
	}
	it.ExecutionID = &x.ID
	return w, nil
}

// follow waits for an item's execution (running it again while it was interrupted, see
// rerun), frees its slot, then scores it and records it.
func (d *drive) follow(ctx context.Context, it *domain.ExperimentItem, w *runtime.Waiter) {
	x := d.await(ctx, it, w)
	for x != nil && it.Attempts < domain.ItemMaxAttempts && d.interrupted(ctx, x) {
		x = d.rerun(ctx, it, x)
	}
	d.release()
	if x == nil {
		return
	}
	select {
	case d.scoring <- struct{}{}:
	case <-ctx.Done():
		return
	}
	defer func() { <-d.scoring }()
	d.score(ctx, it, x)
}

// rerun runs an item whose execution x was interrupted again, as a new execution: x's server
// stopped after its first model call, so no answer of the model reached the platform and the
// item has not run yet. The new execution is linked in the transaction that creates it, only
// while the item still points at x: of two nodes following the item, one runs it again. It
// returns the new execution once it ended; nil when ctx ended or another node ran it again
// first; x, its error saying why, when the item cannot run again (a plan limit, say).
func (d *drive) rerun(ctx context.Context, it *domain.ExperimentItem, x *domain.Execution) *domain.Execution {
	w, err := d.submit(ctx, it, func(ctx context.Context, tx *store.Store, nx *domain.Execution) error {
		return tx.ExperimentItemRetry(ctx, d.x.ID, it.ItemID, x.ID, nx.ID)
	})
	switch {
	case errors.Is(err, domain.ErrItemTaken) || ctx.Err() != nil:
		return nil
	case err != nil:
		failed := *x
		msg := fmt.Sprintf("%s; it could not run again: %v", domain.Deref(x.Error), err)
		failed.Error = &msg
		return &failed
	}
	it.Attempts++
	d.r.cfg.Logger.Info("experiment item runs again: its execution was interrupted", slog.String("experiment_id", d.x.ID),
		slog.String("item_id", it.ItemID), slog.String("interrupted", x.ID), slog.String("execution_id", *it.ExecutionID))
	return d.await(ctx, it, w)
}

// interrupted reports whether x failed because its server stopped after its first model call:
// its terminal error frame has the code runtime.CodeInterrupted (written by the engine's
// rescuer, or by the run itself on a shutdown). A frame that cannot be read yet is read again
// until ctx ends.
func (d *drive) interrupted(ctx context.Context, x *domain.Execution) bool {
	if x.Status != domain.StatusFailed {
		return false
	}
	for {
		code, err := endCode(ctx, d.r.cfg.Store, x.ID)
		if err == nil {
			return code == runtime.CodeInterrupted
		}
		if store.IsNotFound(err) {
			return false
		}
		if ctx.Err() == nil {
			d.r.cfg.Logger.Warn("read item execution's end", slog.String("execution_id", x.ID), slog.Any("error", err))
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(awaitPoll):
		}
	}
}

// endCode returns the code of an execution's terminal error frame ("" when its last frame is
// not an error, or has no code).
func endCode(ctx context.Context, st *store.Store, executionID string) (string, error) {
	last, err := st.EventLastSeq(ctx, executionID)
	if err != nil {
		return "", fmt.Errorf("read last frame of %s: %w", executionID, err)
	}
	evs, err := st.EventList(ctx, executionID, last-1)
	if err != nil || len(evs) == 0 || evs[len(evs)-1].Event != "error" {
		return "", err
	}
	var frame struct {
		Code string `json:"code"`
	}
	if err := json.Unmarshal(evs[len(evs)-1].Data, &frame); err != nil {
		return "", fmt.Errorf("read terminal frame of %s: %w", executionID, err)
	}
	return frame.Code, nil
}

// await waits for an item's execution to end (w, when it runs on this node, else by looking
// at it again) and returns it; nil when ctx ended first.
func (d *drive) await(ctx context.Context, it *domain.ExperimentItem, w *runtime.Waiter) *domain.Execution {
	var x *domain.Execution
	if w != nil {
		select {
		case <-w.Done():
			x = w.Result()
		case <-ctx.Done():
			return nil
		}
	}
	st := d.r.cfg.Store
	for x == nil || !domain.IsTerminal(x.Status) {
		var err error
		if x, err = st.ExecutionGet(ctx, d.x.WorkspaceID, *it.ExecutionID); err != nil && ctx.Err() == nil && !store.IsNotFound(err) {
			d.r.cfg.Logger.Warn("read item execution", slog.String("execution_id", *it.ExecutionID), slog.Any("error", err))
		}
		if store.IsNotFound(err) {
			// Deleted (retention, or its workspace's cleanup): the item failed.
			msg := fmt.Sprintf("execution %s no longer exists", *it.ExecutionID)
			x = &domain.Execution{ID: *it.ExecutionID, Status: domain.StatusFailed, Error: &msg}
			break
		}
		if x != nil && domain.IsTerminal(x.Status) {
			break
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(awaitPoll):
		}
	}
	return x
}

// score runs the evaluators on a completed execution and records the item's outcome; its
// scores are written with it, once.
func (d *drive) score(ctx context.Context, it *domain.ExperimentItem, x *domain.Execution) {
	o := domain.ItemOutcome{Status: domain.ItemFailed, Output: x.Output, Error: x.Error, Scores: domain.JSONObject{}, Cost: x.Cost,
		TotalTokens: x.TokenUsage.TotalTokens, DurationMS: x.DurationMS, ExecutionID: x.ID}
	var scores []*domain.Score
	if x.Status == domain.StatusCompleted {
		o.Status, o.Error = domain.ItemCompleted, nil
		scores = d.evaluate(ctx, it, x, &o)
	}
	if ctx.Err() != nil {
		return // stopped mid-way: whoever goes on scores it again
	}
	if _, err := d.r.cfg.Store.ExperimentItemFinish(ctx, d.x.ID, it.ItemID, domain.ItemRunning, o, scores); err != nil && ctx.Err() == nil {
		d.r.cfg.Logger.Warn("record experiment item", slog.String("experiment_id", d.x.ID), slog.String("item_id", it.ItemID), slog.Any("error", err))
	}
}

// evaluate scores an output with every evaluator; an evaluator that cannot judge it leaves
// its score out and says why in the item's error.
func (d *drive) evaluate(ctx context.Context, it *domain.ExperimentItem, x *domain.Execution, o *domain.ItemOutcome) []*domain.Score {
	var scores []*domain.Score
	var failures []error
	c := eval.Case{Input: it.Input, Output: x.Output, ExpectedOutput: it.ExpectedOutput, Metadata: it.Metadata}
	for _, ev := range d.evaluators {
		res, err := eval.Run(ctx, d.r.cfg.Store, d.r.cfg.Engine.Judge, ev, c)
		if err != nil {
			failures = append(failures, fmt.Errorf("evaluator %s: %w", ev.Name, err))
			continue
		}
		scores = append(scores, &domain.Score{WorkspaceID: d.x.WorkspaceID, Name: res.Name, ConfigID: res.ConfigID, DataType: res.DataType,
			Value: res.Value, StringValue: res.StringValue, ExecutionID: &x.ID, Source: domain.ScoreSourceEval, Comment: res.Comment,
			Metadata: domain.JSONObject{"experiment_id": d.x.ID, "evaluator_id": ev.ID, "dataset_item_id": it.ItemID}})
		if res.DataType == domain.ScoreCategorical && res.StringValue != nil {
			o.Scores[res.Name] = *res.StringValue
		} else if res.Value != nil {
			o.Scores[res.Name] = *res.Value
		}
	}
	if len(failures) > 0 {
		msg := errors.Join(failures...).Error()
		o.Error = &msg
	}
	return scores
}

// finish ends the experiment (unless it was cancelled meanwhile).
func (d *drive) finish(ctx context.Context, status string, msg *string, log *slog.Logger) {
	if _, err := d.r.cfg.Store.ExperimentFinish(context.WithoutCancel(ctx), d.x.ID, status, msg); err != nil {
		log.Warn("finish experiment", slog.Any("error", err))
	}
}
