package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
)

// AnnotationQueue holds executions for people to score under its score configs.
type AnnotationQueue struct {
	ID             string  `json:"id"`
	WorkspaceID    string  `json:"workspace_id"`
	Name           string  `json:"name" doc:"Unique in the workspace."`
	Description    string  `json:"description"`
	ScoreConfigIDs Strings `json:"score_config_ids" doc:"The score configs reviewers score each execution under."`
	CreatedAt      Time    `json:"created_at"`
	UpdatedAt      Time    `json:"updated_at"`
}

// Annotation item statuses.
const (
	AnnotationPending   = "pending"
	AnnotationClaimed   = "claimed"
	AnnotationCompleted = "completed"
)

// AnnotationItem is one execution of a queue to review.
type AnnotationItem struct {
	ID             string  `json:"id"`
	WorkspaceID    string  `json:"workspace_id"`
	QueueID        string  `json:"queue_id"`
	ExecutionID    string  `json:"execution_id"`
	Status         string  `json:"status" enum:"pending,claimed,completed" doc:"claimed: a reviewer holds it until claim_expires_at; after that it is pending again."`
	ClaimedBy      *string `json:"claimed_by" doc:"The reviewer holding or who completed it: a user's id, an API key's id, or \"emulator\"."`
	ClaimExpiresAt *Time   `json:"claim_expires_at"`
	CompletedAt    *Time   `json:"completed_at"`
	CreatedAt      Time    `json:"created_at"`
	UpdatedAt      Time    `json:"updated_at"`
}

const annotationQueueColumns = `id, workspace_id, name, description, score_config_ids, created_at, updated_at`

func scanAnnotationQueue(row interface{ Scan(...any) error }) (*AnnotationQueue, error) {
	var q AnnotationQueue
	if err := row.Scan(&q.ID, &q.WorkspaceID, &q.Name, &q.Description, &q.ScoreConfigIDs, &q.CreatedAt, &q.UpdatedAt); err != nil {
		return nil, err
	}
	if q.ScoreConfigIDs == nil {
		q.ScoreConfigIDs = Strings{}
	}
	return &q, nil
}

// AnnotationQueueList returns one page of a workspace's queues, newest first, and the total.
func (s *Store) AnnotationQueueList(ctx context.Context, ws string, p Page) ([]*AnnotationQueue, int, error) {
	where, args := whereClause("", ws, nil)
	q, qargs := pagedSelect(annotationQueueColumns, "annotation_queues", where, args, p)
	rows, err := s.r.QueryContext(ctx, q, qargs...)
	if err != nil {
		return nil, 0, fmt.Errorf("list annotation queues: %w", err)
	}
	items, err := collect(rows, scanAnnotationQueue)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.listCount(ctx, p, len(items), "annotation_queues"+where, args)
	return items, total, err
}

// AnnotationQueueGet returns one queue of the workspace.
func (s *Store) AnnotationQueueGet(ctx context.Context, ws, id string) (*AnnotationQueue, error) {
	q, err := scanAnnotationQueue(s.r.QueryRowContext(ctx, "SELECT "+annotationQueueColumns+" FROM annotation_queues WHERE workspace_id = $1 AND id = $2", ws, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("annotation queue", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get annotation queue %s: %w", id, err)
	}
	return q, nil
}

// AnnotationQueueCreate checks that the queue's score configs exist and take scores, and
// inserts it; a name already used is a *ConflictError.
func (s *Store) AnnotationQueueCreate(ctx context.Context, q *AnnotationQueue) (*AnnotationQueue, error) {
	if len(q.ScoreConfigIDs) == 0 {
		return nil, &ValidationError{Field: "score_config_ids", Message: "at least one score config is required"}
	}
	for i, id := range q.ScoreConfigIDs {
		c, err := s.ScoreConfigGet(ctx, q.WorkspaceID, id)
		if IsNotFound(err) {
			return nil, &ReferenceError{Field: fmt.Sprintf("score_config_ids[%d]", i), Resource: "score config", ID: id}
		}
		if err != nil {
			return nil, err
		}
		if c.Archived {
			return nil, &ValidationError{Field: fmt.Sprintf("score_config_ids[%d]", i), Message: fmt.Sprintf("score config %s (%s) is archived", c.Name, c.ID)}
		}
	}
	if q.ID == "" {
		q.ID = NewID()
	}
	_, err := s.exec(ctx, `INSERT INTO annotation_queues (id, workspace_id, name, description, score_config_ids, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6)`, q.ID, q.WorkspaceID, q.Name, q.Description, q.ScoreConfigIDs, Now())
	if isUniqueViolation(err) {
		return nil, &ConflictError{Message: fmt.Sprintf("an annotation queue named %q already exists in this workspace", q.Name)}
	}
	if err != nil {
		return nil, fmt.Errorf("insert annotation queue: %w", err)
	}
	return s.AnnotationQueueGet(ctx, q.WorkspaceID, q.ID)
}

const annotationItemColumns = `id, workspace_id, queue_id, execution_id, status, claimed_by, claim_expires_at, completed_at, created_at, updated_at`

func scanAnnotationItem(row interface{ Scan(...any) error }) (*AnnotationItem, error) {
	var it AnnotationItem
	var expires, completed *int64
	if err := row.Scan(&it.ID, &it.WorkspaceID, &it.QueueID, &it.ExecutionID, &it.Status, &it.ClaimedBy, &expires, &completed,
		&it.CreatedAt, &it.UpdatedAt); err != nil {
		return nil, err
	}
	if expires != nil {
		it.ClaimExpiresAt = ptrTo(TimeFromMillis(*expires))
		if it.Status == AnnotationClaimed && it.ClaimExpiresAt.Before(Now().Time) {
			it.Status = AnnotationPending // the claim ran out
		}
	}
	if completed != nil {
		it.CompletedAt = ptrTo(TimeFromMillis(*completed))
	}
	return &it, nil
}

// AnnotationItemList returns one page of a queue's items, newest first, and the total.
func (s *Store) AnnotationItemList(ctx context.Context, ws, queueID string, p Page) ([]*AnnotationItem, int, error) {
	if _, err := s.AnnotationQueueGet(ctx, ws, queueID); err != nil {
		return nil, 0, err
	}
	where, args := whereClause("", ws, []cond{{"queue_id = $%d", queueID}})
	q, qargs := pagedSelect(annotationItemColumns, "annotation_items", where, args, p)
	rows, err := s.r.QueryContext(ctx, q, qargs...)
	if err != nil {
		return nil, 0, fmt.Errorf("list annotation items: %w", err)
	}
	items, err := collect(rows, scanAnnotationItem)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.listCount(ctx, p, len(items), "annotation_items"+where, args)
	return items, total, err
}

// AnnotationItemGet returns one item of a queue.
func (s *Store) AnnotationItemGet(ctx context.Context, ws, queueID, id string) (*AnnotationItem, error) {
	it, err := scanAnnotationItem(s.r.QueryRowContext(ctx, "SELECT "+annotationItemColumns+
		" FROM annotation_items WHERE workspace_id = $1 AND queue_id = $2 AND id = $3", ws, queueID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("annotation item", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get annotation item %s: %w", id, err)
	}
	return it, nil
}

// AnnotationItemsAdd adds executions of the workspace to a queue, in one transaction, and
// returns the items added; an execution already in the queue is skipped, a missing one is a
// *ReferenceError naming its index.
func (s *Store) AnnotationItemsAdd(ctx context.Context, ws, queueID string, executionIDs []string) ([]*AnnotationItem, error) {
	var out []*AnnotationItem
	err := s.InTx(ctx, func(tx *Store) error {
		if _, err := tx.AnnotationQueueGet(ctx, ws, queueID); err != nil {
			return err
		}
		missing, err := tx.missingIDs(ctx, "executions", ws, executionIDs)
		if err != nil {
			return err
		}
		if len(missing) > 0 {
			return &ReferenceError{Field: fmt.Sprintf("execution_ids[%d]", slices.Index(executionIDs, missing[0])), Resource: "execution", ID: missing[0]}
		}
		now := Now()
		for _, x := range executionIDs {
			id := NewID()
			res, err := tx.exec(ctx, `INSERT INTO annotation_items (id, workspace_id, queue_id, execution_id, status, created_at, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (queue_id, execution_id) DO NOTHING`, id, ws, queueID, x, AnnotationPending, now)
			if err != nil {
				return fmt.Errorf("add execution %s to annotation queue %s: %w", x, queueID, err)
			}
			if n, _ := res.RowsAffected(); n == 1 {
				it, err := tx.AnnotationItemGet(ctx, ws, queueID, id)
				if err != nil {
					return err
				}
				out = append(out, it)
			}
		}
		return nil
	})
	return out, err
}

// AnnotationItemClaim gives reviewer the oldest item of the queue that is pending, or whose
// claim ran out, until leaseMS from now, in one guarded statement (two reviewers never get
// the same item); nil when there is none.
func (s *Store) AnnotationItemClaim(ctx context.Context, ws, queueID, reviewer string, leaseMS int64) (*AnnotationItem, error) {
	if _, err := s.AnnotationQueueGet(ctx, ws, queueID); err != nil {
		return nil, err
	}
	now := Now()
	for range 5 { // another reviewer may take the row first: look again
		var id string
		err := s.r.QueryRowContext(ctx, `SELECT id FROM annotation_items WHERE queue_id = $1 AND workspace_id = $2
			AND (status = $3 OR (status = $4 AND claim_expires_at < $5)) ORDER BY created_at, id LIMIT 1`,
			queueID, ws, AnnotationPending, AnnotationClaimed, now.UnixMilli()).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("find an item of annotation queue %s: %w", queueID, err)
		}
		res, err := s.exec(ctx, `UPDATE annotation_items SET status = $1, claimed_by = $2, claim_expires_at = $3, updated_at = $4
			WHERE id = $5 AND (status = $6 OR (status = $1 AND claim_expires_at < $7))`,
			AnnotationClaimed, reviewer, now.UnixMilli()+leaseMS, now, id, AnnotationPending, now.UnixMilli())
		if err != nil {
			return nil, fmt.Errorf("claim annotation item %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return s.AnnotationItemGet(ctx, ws, queueID, id)
		}
	}
	return nil, &ConflictError{Message: "other reviewers are claiming this queue's items at the same moment; try again"}
}

// AnnotationItemComplete records a reviewer's scores of a claimed item and marks it completed,
// in one transaction: the item must be claimed by reviewer, unexpired (else a *ConflictError),
// and every score under one of the queue's score configs (a *ValidationError naming it). The
// scores get source annotation and the item's execution.
func (s *Store) AnnotationItemComplete(ctx context.Context, ws, queueID, id, reviewer string, scores []*Score) (*AnnotationItem, []*Score, error) {
	var it *AnnotationItem
	var out []*Score
	err := s.InTx(ctx, func(tx *Store) error {
		q, err := tx.AnnotationQueueGet(ctx, ws, queueID)
		if err != nil {
			return err
		}
		if it, err = tx.AnnotationItemGet(ctx, ws, queueID, id); err != nil {
			return err
		}
		if it.Status != AnnotationClaimed || deref(it.ClaimedBy) != reviewer {
			return &ConflictError{Message: fmt.Sprintf("annotation item %s is %s, not claimed by you: claim it with POST /api/v1/annotation-queues/%s/next", id, it.Status, queueID)}
		}
		if len(scores) == 0 {
			return &ValidationError{Field: "scores", Message: "at least one score is required"}
		}
		for i, sc := range scores {
			if sc.ConfigID == nil || !slices.Contains(q.ScoreConfigIDs, *sc.ConfigID) {
				return &ValidationError{Field: fmt.Sprintf("scores[%d].config_id", i), Message: "must be one of the queue's score_config_ids: " + fmt.Sprint([]string(q.ScoreConfigIDs))}
			}
			sc.WorkspaceID, sc.ExecutionID, sc.Source = ws, &it.ExecutionID, ScoreSourceAnnotation
			created, err := tx.ScoreCreate(ctx, sc)
			if err != nil {
				var ve *ValidationError
				if errors.As(err, &ve) {
					return &ValidationError{Field: fmt.Sprintf("scores[%d].%s", i, ve.Field), Message: ve.Message}
				}
				return err
			}
			out = append(out, created)
		}
		now := Now()
		res, err := tx.exec(ctx, `UPDATE annotation_items SET status = $1, completed_at = $2, claim_expires_at = NULL, updated_at = $3
			WHERE id = $4 AND status = $5 AND claimed_by = $6`, AnnotationCompleted, now.UnixMilli(), now, id, AnnotationClaimed, reviewer)
		if err != nil {
			return fmt.Errorf("complete annotation item %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return &ConflictError{Message: fmt.Sprintf("annotation item %s changed while its scores were written; claim it again", id)}
		}
		it, err = tx.AnnotationItemGet(ctx, ws, queueID, id)
		return err
	})
	return it, out, err
}
