package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Experiment statuses: pending until a node takes it, running while its items run, then one
// of the three terminal ones.
const (
	ExperimentPending   = "pending"
	ExperimentRunning   = "running"
	ExperimentCompleted = "completed"
	ExperimentFailed    = "failed"
	ExperimentCancelled = "cancelled"
)

// Statuses of an experiment's item: pending until its execution is created, running until
// that execution ends and the evaluators have scored it, then completed or failed (the
// execution's outcome), or cancelled with its experiment before it started.
const (
	ItemPending   = "pending"
	ItemRunning   = "running"
	ItemCompleted = "completed"
	ItemFailed    = "failed"
	ItemCancelled = "cancelled"
)

// ExperimentProgress counts an experiment's items: all of them, and those finished.
type ExperimentProgress struct {
	Total     int `json:"total"`
	Completed int `json:"completed" doc:"Items whose execution completed (and was scored)."`
	Failed    int `json:"failed" doc:"Items whose execution failed, was cancelled or was interrupted."`
}

// Experiment runs an agent version on every item of a dataset, each as an execution, and
// scores each run with evaluators.
type Experiment struct {
	ID             string             `json:"id"`
	WorkspaceID    string             `json:"workspace_id"`
	Name           string             `json:"name"`
	DatasetID      string             `json:"dataset_id"`
	DatasetVersion int                `json:"dataset_version" doc:"The dataset's version when the experiment was created: its items were copied then."`
	AgentID        string             `json:"agent_id"`
	VersionID      string             `json:"version_id" doc:"The agent version run: the one asked for, else the version active at creation."`
	EvaluatorIDs   Strings            `json:"evaluator_ids"`
	Concurrency    int                `json:"concurrency" doc:"How many items run at once."`
	Metadata       JSONObject         `json:"metadata"`
	Status         string             `json:"status" enum:"pending,running,completed,failed,cancelled"`
	Error          *string            `json:"error" doc:"Why the experiment failed; null otherwise."`
	Progress       ExperimentProgress `json:"progress"`
	Summary        *ExperimentSummary `json:"summary,omitempty" doc:"The scores, cost, tokens and latency of the items finished so far (on GET of one experiment)."`
	CreatedAt      Time               `json:"created_at"`
	StartedAt      *Time              `json:"started_at"`
	CompletedAt    *Time              `json:"completed_at"`
	UpdatedAt      Time               `json:"updated_at"`

	// OwnerNode is the node driving the experiment until LeaseExpiresAt (Unix ms).
	OwnerNode      *string `json:"-"`
	LeaseExpiresAt *int64  `json:"-"`
}

// ExperimentSummary sums up the finished items of an experiment.
type ExperimentSummary struct {
	Scores      []ScoreStat `json:"scores" doc:"One entry per score name, sorted by name."`
	Cost        float64     `json:"cost" doc:"USD, the executions' total."`
	TotalTokens int         `json:"total_tokens"`
	LatencyP50  *int64      `json:"latency_p50_ms" doc:"Median duration of the items' executions; null before any finished."`
	LatencyP95  *int64      `json:"latency_p95_ms"`
}

// ScoreStat is what the scores of one name came to: the mean of numbers (numeric and boolean
// scores), or how often each label was given (categorical).
type ScoreStat struct {
	Name         string         `json:"name"`
	Count        int            `json:"count"`
	Mean         *float64       `json:"mean" doc:"Numeric and boolean scores (1 true, 0 false); null for categorical."`
	Distribution map[string]int `json:"distribution,omitempty" doc:"Categorical scores: label to count."`
}

// ExperimentItem is one item of an experiment and what became of it: a row of its results.
type ExperimentItem struct {
	ItemID         string          `json:"item_id"`
	Position       int             `json:"position" doc:"The item's place in the dataset (oldest first) when the experiment was created."`
	ExecutionID    *string         `json:"execution_id"`
	Status         string          `json:"status" enum:"pending,running,completed,failed,cancelled"`
	Input          JSONObject      `json:"input"`
	Output         json.RawMessage `json:"output" doc:"The execution's output; null until it completed."`
	ExpectedOutput json.RawMessage `json:"expected_output"`
	Error          *string         `json:"error" doc:"Why the execution (or an evaluator) failed."`
	Scores         JSONObject      `json:"scores" doc:"Score name to value: a number (numeric; boolean as 1 or 0) or a label (categorical)."`
	Cost           float64         `json:"cost"`
	TotalTokens    int             `json:"total_tokens"`
	DurationMS     *int64          `json:"duration_ms"`
	Metadata       JSONObject      `json:"-"`
	DoneSeq        *int            `json:"-"`
}

// ExperimentFilter narrows ExperimentList; zero fields match everything.
type ExperimentFilter struct {
	DatasetID, AgentID, Status string
}

// ErrItemTaken says an experiment item already has its execution, or its experiment is no
// longer running: the caller must not run it.
var ErrItemTaken = errors.New("the experiment item is taken or its experiment is not running")

const experimentColumns = `id, workspace_id, name, dataset_id, dataset_version, agent_id, version_id, evaluator_ids, concurrency, metadata,
	status, error, total, completed, failed, owner_node, lease_expires_at, created_at, started_at, completed_at, updated_at`

func scanExperiment(row interface{ Scan(...any) error }) (*Experiment, error) {
	var x Experiment
	if err := row.Scan(&x.ID, &x.WorkspaceID, &x.Name, &x.DatasetID, &x.DatasetVersion, &x.AgentID, &x.VersionID, &x.EvaluatorIDs,
		&x.Concurrency, &x.Metadata, &x.Status, &x.Error, &x.Progress.Total, &x.Progress.Completed, &x.Progress.Failed,
		&x.OwnerNode, &x.LeaseExpiresAt, &x.CreatedAt, &x.StartedAt, &x.CompletedAt, &x.UpdatedAt); err != nil {
		return nil, err
	}
	if x.Metadata == nil {
		x.Metadata = JSONObject{}
	}
	return &x, nil
}

const experimentItemColumns = `item_id, position, execution_id, status, input, output, expected_output, error, scores, cost,
	total_tokens, duration_ms, metadata, done_seq`

func scanExperimentItem(row interface{ Scan(...any) error }) (*ExperimentItem, error) {
	var it ExperimentItem
	var output, expected sql.NullString
	if err := row.Scan(&it.ItemID, &it.Position, &it.ExecutionID, &it.Status, &it.Input, &output, &expected, &it.Error, &it.Scores,
		&it.Cost, &it.TotalTokens, &it.DurationMS, &it.Metadata, &it.DoneSeq); err != nil {
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
func (s *Store) ExperimentCreate(ctx context.Context, x *Experiment, items []*DatasetItem) (*Experiment, error) {
	var out *Experiment
	err := s.InTx(ctx, func(tx *Store) error {
		if x.ID == "" {
			x.ID = NewID()
		}
		now := Now()
		_, err := tx.exec(ctx, `INSERT INTO experiments (id, workspace_id, name, dataset_id, dataset_version, agent_id, version_id, evaluator_ids,
			concurrency, metadata, status, total, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)`,
			x.ID, x.WorkspaceID, x.Name, x.DatasetID, x.DatasetVersion, x.AgentID, x.VersionID, x.EvaluatorIDs, x.Concurrency,
			nonNilObject(x.Metadata), ExperimentPending, len(items), now)
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

func (s *Store) experimentItemsInsert(ctx context.Context, experimentID string, offset int, items []*DatasetItem) error {
	var b strings.Builder
	b.WriteString("INSERT INTO experiment_items (experiment_id, item_id, position, input, expected_output, metadata, status) VALUES ")
	args := make([]any, 0, 7*len(items))
	for i, it := range items {
		if i > 0 {
			b.WriteString(", ")
		}
		n := len(args)
		fmt.Fprintf(&b, "($%d, $%d, $%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6, n+7)
		args = append(args, experimentID, it.ID, offset+i, nonNilObject(it.Input), nullRaw(it.ExpectedOutput), nonNilObject(it.Metadata), ItemPending)
	}
	if _, err := s.exec(ctx, b.String(), args...); err != nil {
		return fmt.Errorf("insert experiment items: %w", err)
	}
	return nil
}

// ExperimentGet returns one experiment of the workspace.
func (s *Store) ExperimentGet(ctx context.Context, ws, id string) (*Experiment, error) {
	x, err := scanExperiment(s.r.QueryRowContext(ctx, "SELECT "+experimentColumns+" FROM experiments WHERE workspace_id = $1 AND id = $2", ws, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("experiment", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get experiment %s: %w", id, err)
	}
	return x, nil
}

// ExperimentList returns one page of a workspace's experiments, newest first, and the total.
func (s *Store) ExperimentList(ctx context.Context, ws string, f ExperimentFilter, p Page) ([]*Experiment, int, error) {
	where, args := whereClause("", ws, []cond{{"dataset_id = $%d", f.DatasetID}, {"agent_id = $%d", f.AgentID}, {"status = $%d", f.Status}})
	q, qargs := pagedSelect(experimentColumns, "experiments", where, args, p)
	rows, err := s.r.QueryContext(ctx, q, qargs...)
	if err != nil {
		return nil, 0, fmt.Errorf("list experiments: %w", err)
	}
	items, err := collect(rows, scanExperiment)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.listCount(ctx, p, len(items), "experiments"+where+newestFirst, args)
	return items, total, err
}

// ExperimentClaim makes up to limit unfinished experiments whose lease is free (new ones) or
// expired (their node stopped) node's for lease, and running. Each is taken by one node:
// the statement checks the lease again on the row it updates.
func (s *Store) ExperimentClaim(ctx context.Context, node string, lease time.Duration, limit int) ([]*Experiment, error) {
	now := Now()
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
		Now().UnixMilli()+lease.Milliseconds(), id, node)
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
		now := Now()
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
func (s *Store) ExperimentCancel(ctx context.Context, ws, id string) (*Experiment, []string, error) {
	var out *Experiment
	var running []string
	err := s.InTx(ctx, func(tx *Store) error {
		x, err := tx.ExperimentGet(ctx, ws, id)
		if err != nil {
			return err
		}
		now := Now()
		res, err := tx.exec(ctx, `UPDATE experiments SET status = 'cancelled', completed_at = $1, updated_at = $1, owner_node = NULL,
			lease_expires_at = NULL WHERE id = $2 AND status IN ('pending', 'running')`, now, id)
		if err != nil {
			return fmt.Errorf("cancel experiment %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return &ConflictError{Message: fmt.Sprintf("experiment %s is %s and cannot be cancelled", id, x.Status)}
		}
		items, err := tx.ExperimentItemsByStatus(ctx, id, ItemRunning, 0)
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
func (s *Store) ExperimentItemsByStatus(ctx context.Context, experimentID, status string, limit int) ([]*ExperimentItem, error) {
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
func (s *Store) ExperimentItemsPending(ctx context.Context, experimentID string, after, limit int) ([]*ExperimentItem, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+experimentItemColumns+fmt.Sprintf(` FROM experiment_items WHERE experiment_id = $1
		AND status = 'pending' AND position > $2 ORDER BY position LIMIT %d`, limit), experimentID, after)
	if err != nil {
		return nil, fmt.Errorf("read pending items of experiment %s: %w", experimentID, err)
	}
	return collect(rows, scanExperimentItem)
}

// ExperimentItems returns one page of an experiment's items in dataset order (limit 0: all).
func (s *Store) ExperimentItems(ctx context.Context, experimentID string, p Page) ([]*ExperimentItem, error) {
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
func (s *Store) ExperimentItemsDone(ctx context.Context, experimentID string, afterSeq, limit int) ([]*ExperimentItem, error) {
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
	res, err := s.exec(ctx, `UPDATE experiment_items SET status = 'running', execution_id = $1 WHERE experiment_id = $2 AND item_id = $3
		AND status = 'pending' AND execution_id IS NULL AND EXISTS (SELECT 1 FROM experiments WHERE id = $2 AND status = 'running')`,
		executionID, experimentID, itemID)
	if err != nil {
		return fmt.Errorf("attach item %s of experiment %s: %w", itemID, experimentID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrItemTaken
	}
	return nil
}

// ItemOutcome is what became of an item's execution, written by ExperimentItemFinish.
type ItemOutcome struct {
	Status      string // ItemCompleted or ItemFailed
	Output      json.RawMessage
	Error       *string
	Scores      JSONObject
	Cost        float64
	TotalTokens int
	DurationMS  *int64
}

// ExperimentItemFinish records the outcome of an item that is from (running; pending for one
// that could not start), counts it in its experiment and stores its scores, in one
// transaction, once: false (and nothing written) when the item is no longer from (another
// node finished it first).
func (s *Store) ExperimentItemFinish(ctx context.Context, experimentID, itemID, from string, o ItemOutcome, scores []*Score) (bool, error) {
	err := s.InTx(ctx, func(tx *Store) error {
		// Count it first: the experiment's row, locked until commit, numbers the items in the
		// order they finish. An item that was not from rolls the count back.
		column := "completed"
		if o.Status != ItemCompleted {
			column = "failed"
		}
		var seq int
		if err := tx.w.QueryRowContext(ctx, "UPDATE experiments SET "+column+" = "+column+" + 1, updated_at = $1 WHERE id = $2 RETURNING completed + failed",
			Now(), experimentID).Scan(&seq); err != nil {
			return fmt.Errorf("count item %s of experiment %s: %w", itemID, experimentID, err)
		}
		res, err := tx.exec(ctx, `UPDATE experiment_items SET status = $1, output = $2, error = $3, scores = $4, cost = $5, total_tokens = $6,
			duration_ms = $7, done_seq = $8 WHERE experiment_id = $9 AND item_id = $10 AND status = $11`,
			o.Status, nullRaw(o.Output), o.Error, nonNilObject(o.Scores), o.Cost, o.TotalTokens, o.DurationMS, seq, experimentID, itemID, from)
		if err != nil {
			return fmt.Errorf("finish item %s of experiment %s: %w", itemID, experimentID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errItemNotFrom
		}
		for _, sc := range scores {
			if _, err := tx.ScoreCreate(ctx, sc); err != nil {
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
