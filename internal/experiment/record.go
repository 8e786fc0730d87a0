package experiment

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/eval"
	"github.com/agentplane/agentplane/internal/store"
)

// recordAtEnd is the store's terminal hook that records an item of an experiment this node
// drives in the transaction that ends its run: its outcome and scores commit with the run's
// end, or not at all (then the drive, or the next owner, scores the item as before).
//
// Why: BenchmarkExperiment (bench/, SQLite, zero-latency model) measured an experiment's
// items behind the same runs submitted directly; recording each item in a transaction of
// its own was one more turn of SQLite's one writer per item, after the run's end.
//
// Only evaluators that need no model run here (a judge's call cannot wait inside a
// transaction): a drive with a judge leaves its items to score. An item whose run is not
// its execution now, or that is no longer running, is left alone; nothing here fails the
// run's end but the database.
func (r *Runner) recordAtEnd(ctx context.Context, tx *store.Store, x *domain.Execution) error {
	if x.Source != Source || x.ParentID != nil || x.Status != domain.StatusCompleted {
		// A run that did not complete is left to the drive: one failed as interrupted runs
		// its item again (drive.follow), which an outcome recorded here would prevent.
		return nil
	}
	experimentID, _ := x.Metadata["experiment_id"].(string)
	itemID, _ := x.Metadata["dataset_item_id"].(string)
	r.mu.Lock()
	d := r.owned[experimentID]
	r.mu.Unlock()
	if d == nil || !d.recordsAtEnd.Load() {
		return nil
	}

	// The item as stored: still running, and run by this execution.
	it, err := tx.ExperimentItemGet(ctx, experimentID, itemID)
	if store.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if it.Status != domain.ItemRunning || it.ExecutionID == nil || *it.ExecutionID != x.ID {
		return nil
	}

	o, scores := d.outcome(ctx, tx, it, x)
	_, err = tx.ExperimentItemFinish(ctx, experimentID, itemID, domain.ItemRunning, o, scores)
	return err
}

// outcome is what an item's ended execution makes of it: its status, output and totals, and
// the scores of the evaluators (read and checked through st).
func (d *drive) outcome(ctx context.Context, st *store.Store, it *domain.ExperimentItem, x *domain.Execution) (domain.ItemOutcome, []*domain.Score) {
	o := domain.ItemOutcome{Status: domain.ItemFailed, Output: x.Output, Error: x.Error, Scores: domain.JSONObject{}, Cost: x.Cost,
		TotalTokens: x.TokenUsage.TotalTokens, DurationMS: x.DurationMS, ExecutionID: x.ID}
	var scores []*domain.Score
	if x.Status == domain.StatusCompleted {
		o.Status, o.Error = domain.ItemCompleted, nil
		scores = d.evaluate(ctx, st, it, x, &o)
	}
	return o, scores
}

// evaluate scores an output with every evaluator; an evaluator that cannot judge it leaves
// its score out and says why in the item's error.
func (d *drive) evaluate(ctx context.Context, st *store.Store, it *domain.ExperimentItem, x *domain.Execution, o *domain.ItemOutcome) []*domain.Score {
	var scores []*domain.Score
	var failures []error
	c := eval.Case{Input: it.Input, Output: x.Output, ExpectedOutput: it.ExpectedOutput, Metadata: it.Metadata}
	for _, ev := range d.evaluators {
		res, err := eval.Run(ctx, st, d.r.cfg.Engine.Judge, ev, c)
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
