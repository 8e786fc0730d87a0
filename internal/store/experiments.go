package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

const experimentColumns = `id, workspace_id, name, dataset_id, dataset_version, agent_id, version_id, evaluator_ids, concurrency, metadata,
	status, error, total, completed, failed, owner_node, lease_expires_at, created_at, started_at, completed_at, updated_at`

func scanExperiment(row interface{ Scan(...any) error }) (*domain.Experiment, error) {
	var x domain.Experiment
	if err := row.Scan(&x.ID, &x.WorkspaceID, &x.Name, &x.DatasetID, &x.DatasetVersion, &x.AgentID, &x.VersionID, &x.EvaluatorIDs,
		&x.Concurrency, &x.Metadata, &x.Status, &x.Error, &x.Progress.Total, &x.Progress.Completed, &x.Progress.Failed,
		&x.OwnerNode, &x.LeaseExpiresAt, &x.CreatedAt, &x.StartedAt, &x.CompletedAt, &x.UpdatedAt); err != nil {
		return nil, err
	}
	if x.Metadata == nil {
		x.Metadata = domain.JSONObject{}
	}
	return &x, nil
}

const experimentItemColumns = `item_id, position, execution_id, status, input, output, expected_output, error, scores, cost,
	total_tokens, duration_ms, metadata, done_seq, attempts`

func scanExperimentItem(row interface{ Scan(...any) error }) (*domain.ExperimentItem, error) {
	var it domain.ExperimentItem
	var output, expected sql.NullString
	if err := row.Scan(&it.ItemID, &it.Position, &it.ExecutionID, &it.Status, &it.Input, &output, &expected, &it.Error, &it.Scores,
		&it.Cost, &it.TotalTokens, &it.DurationMS, &it.Metadata, &it.DoneSeq, &it.Attempts); err != nil {
		return nil, err
	}
	it.Output, it.ExpectedOutput = rawOrNil(output), rawOrNil(expected)
	it.Input, it.Scores, it.Metadata = nonNilObject(it.Input), nonNilObject(it.Scores), nonNilObject(it.Metadata)
	return &it, nil
}

// experimentItemChunk is how many items one INSERT writes (7 parameters each).
const experimentItemChunk = 100

// ExperimentCreate records a pending experiment and copies the dataset's items into it, in one
// transaction.
func (s *Store) ExperimentCreate(ctx context.Context, x *domain.Experiment, items []*domain.DatasetItem) (*domain.Experiment, error) {
	var out *domain.Experiment
	err := s.InTx(ctx, func(tx *Store) error {
		if x.ID == "" {
			x.ID = NewID()
		}
		now := domain.Now()
		_, err := tx.exec(ctx, `INSERT INTO experiments (id, workspace_id, name, dataset_id, dataset_version, agent_id, version_id, evaluator_ids,
			concurrency, metadata, status, total, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)`,
			x.ID, x.WorkspaceID, x.Name, x.DatasetID, x.DatasetVersion, x.AgentID, x.VersionID, x.EvaluatorIDs, x.Concurrency,
			nonNilObject(x.Metadata), domain.ExperimentPending, len(items), now)
		if err != nil {
			return fmt.Errorf("insert experiment: %w", err)
		}
		for start := 0; start < len(items); start += experimentItemChunk {
			if err := tx.experimentItemsInsert(ctx, x.ID, start, items[start:min(start+experimentItemChunk, len(items))]); err != nil {
				return err
			}
		}
		out, err = tx.ExperimentGet(ctx, x.WorkspaceID, x.ID)
		return err
	})
	return out, err
}

func (s *Store) experimentItemsInsert(ctx context.Context, experimentID string, offset int, items []*domain.DatasetItem) error {
	var b strings.Builder
	b.WriteString("INSERT INTO experiment_items (experiment_id, item_id, position, input, expected_output, metadata, status) VALUES ")
	args := make([]any, 0, 7*len(items))
	for i, it := range items {
		if i > 0 {
			b.WriteString(", ")
		}
		n := len(args)
		fmt.Fprintf(&b, "($%d, $%d, $%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6, n+7)
		args = append(args, experimentID, it.ID, offset+i, nonNilObject(it.Input), nullRaw(it.ExpectedOutput), nonNilObject(it.Metadata), domain.ItemPending)
	}
	if _, err := s.exec(ctx, b.String(), args...); err != nil {
		return fmt.Errorf("insert experiment items: %w", err)
	}
	return nil
}

// ExperimentGet returns one experiment of the workspace.
func (s *Store) ExperimentGet(ctx context.Context, ws, id string) (*domain.Experiment, error) {
	return getByID(ctx, s, "experiment", "experiments", experimentColumns, ws, id, scanExperiment)
}

// ExperimentList returns one page of a workspace's experiments, newest first, and the total.
func (s *Store) ExperimentList(ctx context.Context, ws string, f domain.ExperimentFilter, p domain.Page) ([]*domain.Experiment, int, error) {
	where, args := whereClause("", ws, []cond{{"dataset_id = $%d", f.DatasetID}, {"agent_id = $%d", f.AgentID}, {"status = $%d", f.Status}})
	return listPage(ctx, s, "experiments", experimentColumns, where, args, newestFirst, p, scanExperiment)
}

// ExperimentClaim makes up to limit unfinished experiments whose lease is free (new ones) or
// expired (their node stopped) node's for lease, and running. Each is taken by one node:
// the statement checks the lease again on the row it updates.
func (s *Store) ExperimentClaim(ctx context.Context, node string, lease time.Duration, limit int) ([]*domain.Experiment, error) {
	now := domain.Now()
	free := `status IN ('pending', 'running') AND (lease_expires_at IS NULL OR lease_expires_at < $3)`
	rows, err := s.w.QueryContext(ctx, `UPDATE experiments SET owner_node = $1, lease_expires_at = $2, status = 'running',
		started_at = COALESCE(started_at, $4), updated_at = $4
		WHERE id IN (SELECT id FROM experiments WHERE `+free+fmt.Sprintf(` ORDER BY created_at LIMIT %d) AND `, limit)+free+
		" RETURNING "+experimentColumns, node, now.UnixMilli()+lease.Milliseconds(), now.UnixMilli(), now)
	if err != nil {
		return nil, fmt.Errorf("claim experiments: %w", err)
	}
	return collect(rows, scanExperiment)
}

// ExperimentRenew extends node's lease on a running experiment; false when the node no longer
// holds it (another took it over, or it ended or was cancelled).
func (s *Store) ExperimentRenew(ctx context.Context, id, node string, lease time.Duration) (bool, error) {
	res, err := s.exec(ctx, `UPDATE experiments SET lease_expires_at = $1 WHERE id = $2 AND owner_node = $3 AND status = 'running'`,
		domain.Now().UnixMilli()+lease.Milliseconds(), id, node)
	if err != nil {
		return false, fmt.Errorf("renew experiment %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ExperimentRelease gives up node's lease on an experiment, so another node may take it at
// once (this node is stopping).
func (s *Store) ExperimentRelease(ctx context.Context, id, node string) error {
	_, err := s.exec(ctx, `UPDATE experiments SET lease_expires_at = 0 WHERE id = $1 AND owner_node = $2 AND status = 'running'`, id, node)
	if err != nil {
		return fmt.Errorf("release experiment %s: %w", id, err)
	}
	return nil
}

// ExperimentFinish ends a running experiment as status (completed, or failed with msg: its
// unfinished items are cancelled), in one transaction; false when it was not running
// (cancelled meanwhile).
func (s *Store) ExperimentFinish(ctx context.Context, id, status string, msg *string) (bool, error) {
	done := false
	err := s.InTx(ctx, func(tx *Store) error {
		now := domain.Now()
		res, err := tx.exec(ctx, `UPDATE experiments SET status = $1, error = $2, completed_at = $3, updated_at = $3, owner_node = NULL,
			lease_expires_at = NULL WHERE id = $4 AND status = 'running'`, status, msg, now, id)
		if err != nil {
			return fmt.Errorf("finish experiment %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		done = true
		if _, err := tx.exec(ctx, `UPDATE experiment_items SET status = 'cancelled' WHERE experiment_id = $1 AND status IN ('pending', 'running')`, id); err != nil {
			return fmt.Errorf("cancel items of experiment %s: %w", id, err)
		}
		return nil
	})
	return done, err
}

// ExperimentCancel cancels a pending or running experiment and its unfinished items, in one
// transaction, and returns it with the ids of the executions still running (the caller
// cancels them). Nothing about it changes afterwards. A finished experiment is a
// *ConflictError.
func (s *Store) ExperimentCancel(ctx context.Context, ws, id string) (*domain.Experiment, []string, error) {
	var out *domain.Experiment
	var running []string
	err := s.InTx(ctx, func(tx *Store) error {
		x, err := tx.ExperimentGet(ctx, ws, id)
		if err != nil {
			return err
		}
		now := domain.Now()
		res, err := tx.exec(ctx, `UPDATE experiments SET status = 'cancelled', completed_at = $1, updated_at = $1, owner_node = NULL,
			lease_expires_at = NULL WHERE id = $2 AND status IN ('pending', 'running')`, now, id)
		if err != nil {
			return fmt.Errorf("cancel experiment %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return &ConflictError{Message: fmt.Sprintf("experiment %s is %s and cannot be cancelled", id, x.Status)}
		}
		items, err := tx.ExperimentItemsByStatus(ctx, id, domain.ItemRunning, 0)
		if err != nil {
			return err
		}
		for _, it := range items {
			running = append(running, *it.ExecutionID)
		}
		if _, err := tx.exec(ctx, `UPDATE experiment_items SET status = 'cancelled' WHERE experiment_id = $1 AND status IN ('pending', 'running')`, id); err != nil {
			return fmt.Errorf("cancel items of experiment %s: %w", id, err)
		}
		out, err = tx.ExperimentGet(ctx, ws, id)
		return err
	})
	return out, running, err
}

// ExperimentItemsByStatus returns an experiment's items of a status in dataset order, up to
// limit (0: all).
func (s *Store) ExperimentItemsByStatus(ctx context.Context, experimentID, status string, limit int) ([]*domain.ExperimentItem, error) {
	q := "SELECT " + experimentItemColumns + " FROM experiment_items WHERE experiment_id = $1 AND status = $2 ORDER BY position"
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, err := s.r.QueryContext(ctx, q, experimentID, status)
	if err != nil {
		return nil, fmt.Errorf("read items of experiment %s: %w", experimentID, err)
	}
	return collect(rows, scanExperimentItem)
}

// ExperimentItemsPending returns up to limit pending items of an experiment placed after
// position `after`, in dataset order: a drive walks them once, never reading twice an item
// it is starting.
func (s *Store) ExperimentItemsPending(ctx context.Context, experimentID string, after, limit int) ([]*domain.ExperimentItem, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+experimentItemColumns+fmt.Sprintf(` FROM experiment_items WHERE experiment_id = $1
		AND status = 'pending' AND position > $2 ORDER BY position LIMIT %d`, limit), experimentID, after)
	if err != nil {
		return nil, fmt.Errorf("read pending items of experiment %s: %w", experimentID, err)
	}
	return collect(rows, scanExperimentItem)
}

// ExperimentItems returns one page of an experiment's items in dataset order (limit 0: all).
func (s *Store) ExperimentItems(ctx context.Context, experimentID string, p domain.Page) ([]*domain.ExperimentItem, error) {
	q := "SELECT " + experimentItemColumns + " FROM experiment_items WHERE experiment_id = $1 ORDER BY position"
	if p.Limit > 0 {
		q += limitClause(p)
	}
	rows, err := s.r.QueryContext(ctx, q, experimentID)
	if err != nil {
		return nil, fmt.Errorf("read items of experiment %s: %w", experimentID, err)
	}
	return collect(rows, scanExperimentItem)
}

// ExperimentItemsDone returns the items that finished after the afterSeq-th, in the order
// they finished (their stream frames).
func (s *Store) ExperimentItemsDone(ctx context.Context, experimentID string, afterSeq, limit int) ([]*domain.ExperimentItem, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+experimentItemColumns+fmt.Sprintf(` FROM experiment_items WHERE experiment_id = $1
		AND done_seq > $2 ORDER BY done_seq LIMIT %d`, limit), experimentID, afterSeq)
	if err != nil {
		return nil, fmt.Errorf("read finished items of experiment %s: %w", experimentID, err)
	}
	return collect(rows, scanExperimentItem)
}

// ExperimentItemAttach links a pending item to the execution created for it; run it inside
// the transaction that creates the execution. An item already linked, or whose experiment
// is no longer running, is ErrItemTaken, which must roll the execution back.
func (s *Store) ExperimentItemAttach(ctx context.Context, experimentID, itemID, executionID string) error {
	res, err := s.exec(ctx, `UPDATE experiment_items SET status = 'running', execution_id = $1, attempts = 1 WHERE experiment_id = $2 AND item_id = $3
		AND status = 'pending' AND execution_id IS NULL AND EXISTS (SELECT 1 FROM experiments WHERE id = $2 AND status = 'running')`,
		executionID, experimentID, itemID)
	if err != nil {
		return fmt.Errorf("attach item %s of experiment %s: %w", itemID, experimentID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return domain.ErrItemTaken
	}
	return nil
}

// ExperimentItemRetry links a running item whose execution was interrupted to the new
// execution created to run it again; run it inside the transaction that creates the new
// execution. The interrupted one is kept among the experiment's executions. Only while the
// item still points at interrupted, has had fewer than domain.ItemMaxAttempts executions and
// its experiment runs: else ErrItemTaken (another node ran it again first, or it is done),
// which must roll the new execution back.
func (s *Store) ExperimentItemRetry(ctx context.Context, experimentID, itemID, interrupted, executionID string) error {
	res, err := s.exec(ctx, `UPDATE experiment_items SET execution_id = $1, attempts = attempts + 1 WHERE experiment_id = $2 AND item_id = $3
		AND status = 'running' AND execution_id = $4 AND attempts < $5 AND EXISTS (SELECT 1 FROM experiments WHERE id = $2 AND status = 'running')`,
		executionID, experimentID, itemID, interrupted, domain.ItemMaxAttempts)
	if err != nil {
		return fmt.Errorf("retry item %s of experiment %s: %w", itemID, experimentID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return domain.ErrItemTaken
	}
	if _, err := s.exec(ctx, "INSERT INTO experiment_item_retries (execution_id, experiment_id, item_id) VALUES ($1, $2, $3)",
		interrupted, experimentID, itemID); err != nil {
		return fmt.Errorf("keep execution %s of item %s: %w", interrupted, itemID, err)
	}
	return nil
}

// ExperimentItemFinish records the outcome of an item that is from (running; pending for one
// that could not start), counts it in its experiment and stores its scores, in one
// transaction, once: false (and nothing written) when the item is no longer from (another
// node finished it first) or, with o.ExecutionID, no longer points at that execution (it ran
// again as another).
func (s *Store) ExperimentItemFinish(ctx context.Context, experimentID, itemID, from string, o domain.ItemOutcome, scores []*domain.Score) (bool, error) {
	err := s.InTx(ctx, func(tx *Store) error {
		// Count it first: the experiment's row, locked until commit, numbers the items in the
		// order they finish. An item that was not from rolls the count back.
		column := "completed"
		if o.Status != domain.ItemCompleted {
			column = "failed"
		}
		var seq int
		if err := tx.w.QueryRowContext(ctx, "UPDATE experiments SET "+column+" = "+column+" + 1, updated_at = $1 WHERE id = $2 RETURNING completed + failed",
			domain.Now(), experimentID).Scan(&seq); err != nil {
			return fmt.Errorf("count item %s of experiment %s: %w", itemID, experimentID, err)
		}
		res, err := tx.exec(ctx, `UPDATE experiment_items SET status = $1, output = $2, error = $3, scores = $4, cost = $5, total_tokens = $6,
			duration_ms = $7, done_seq = $8 WHERE experiment_id = $9 AND item_id = $10 AND status = $11 AND ($12 = '' OR execution_id = $12)`,
			o.Status, nullRaw(o.Output), o.Error, nonNilObject(o.Scores), o.Cost, o.TotalTokens, o.DurationMS, seq, experimentID, itemID, from, o.ExecutionID)
		if err != nil {
			return fmt.Errorf("finish item %s of experiment %s: %w", itemID, experimentID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errItemNotFrom
		}
		for _, sc := range scores {
			if err := tx.scoreInsert(ctx, sc); err != nil {
				return fmt.Errorf("store score %s of item %s: %w", sc.Name, itemID, err)
			}
		}
		return nil
	})
	if errors.Is(err, errItemNotFrom) {
		return false, nil
	}
	return err == nil, err
}

// errItemNotFrom rolls back ExperimentItemFinish of an item another node finished first.
var errItemNotFrom = errors.New("the item is no longer in the status it was finished from")
