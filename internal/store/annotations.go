package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentplane/agentplane/internal/domain"
)

const annotationQueueColumns = `id, workspace_id, name, description, score_config_ids,
	(SELECT count(*) FROM annotation_items i WHERE i.queue_id = annotation_queues.id AND i.status = 'pending'),
	(SELECT count(*) FROM annotation_items i WHERE i.queue_id = annotation_queues.id AND i.status = 'completed'),
	created_at, updated_at`

func scanAnnotationQueue(row interface{ Scan(...any) error }) (*domain.AnnotationQueue, error) {
	var q domain.AnnotationQueue
	if err := row.Scan(&q.ID, &q.WorkspaceID, &q.Name, &q.Description, jsonCol{&q.ScoreConfigIDs}, &q.Pending, &q.Completed,
		&q.CreatedAt, &q.UpdatedAt); err != nil {
		return nil, err
	}
	if q.ScoreConfigIDs == nil {
		q.ScoreConfigIDs = domain.Strings{}
	}
	return &q, nil
}

const annotationItemColumns = `id, workspace_id, queue_id, execution_id, status, claimed_by, claimed_by_name, claim_expires_at,
	completed_by, completed_by_name, completed_at, created_at`

func scanAnnotationItem(row interface{ Scan(...any) error }) (*domain.AnnotationItem, error) {
	var it domain.AnnotationItem
	if err := row.Scan(&it.ID, &it.WorkspaceID, &it.QueueID, &it.ExecutionID, &it.Status, &it.ClaimedBy, &it.ClaimedByName,
		&it.ClaimExpiresAt, &it.CompletedBy, &it.CompletedByName, &it.CompletedAt, &it.CreatedAt); err != nil {
		return nil, err
	}
	// An expired claim is no claim.
	if it.ClaimExpiresAt != nil && !it.ClaimExpiresAt.After(time.Now()) {
		it.ClaimedBy, it.ClaimedByName, it.ClaimExpiresAt = nil, nil, nil
	}
	return &it, nil
}

// AnnotationQueueList returns one page of a workspace's queues, newest first, and the total.
func (s *Store) AnnotationQueueList(ctx context.Context, ws string, p domain.Page) ([]*domain.AnnotationQueue, int, error) {
	where, args := whereClause("", ws, nil)
	return listPage(ctx, s, "annotation_queues", annotationQueueColumns, where, args, "", p, scanAnnotationQueue)
}

// AnnotationQueueGet returns one queue of the workspace with its item counts.
func (s *Store) AnnotationQueueGet(ctx context.Context, ws, id string) (*domain.AnnotationQueue, error) {
	q, err := scanAnnotationQueue(s.r.QueryRowContext(ctx, "SELECT "+annotationQueueColumns+
		" FROM annotation_queues WHERE workspace_id = $1 AND id = $2", ws, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("annotation queue", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get annotation queue %s: %w", id, err)
	}
	return q, nil
}

// maxQueueScoreConfigs bounds the score configs of a queue.
const maxQueueScoreConfigs = 20

// checkScoreConfigs makes sure ids names at least one score config of the workspace, each
// once and none archived.
func (s *Store) checkScoreConfigs(ctx context.Context, ws string, ids domain.Strings) error {
	if len(ids) == 0 {
		return &ValidationError{Field: "score_config_ids", Message: "needs at least one score config"}
	}
	if len(ids) > maxQueueScoreConfigs {
		return &ValidationError{Field: "score_config_ids", Message: fmt.Sprintf("may name at most %d score configs, got %d", maxQueueScoreConfigs, len(ids))}
	}
	seen := map[string]bool{}
	for i, id := range ids {
		field := fmt.Sprintf("score_config_ids[%d]", i)
		if seen[id] {
			return &ValidationError{Field: field, Message: "names " + id + " twice"}
		}
		seen[id] = true
		c, err := s.ScoreConfigGet(ctx, ws, id)
		if IsNotFound(err) {
			return &ReferenceError{Field: field, Resource: "score config", ID: id}
		}
		if err != nil {
			return err
		}
		if c.Archived {
			return &ValidationError{Field: field, Message: "score config " + id + " is archived and takes no new scores"}
		}
	}
	return nil
}

// AnnotationQueueCreate inserts a queue; its score configs must exist and not be archived.
func (s *Store) AnnotationQueueCreate(ctx context.Context, q *domain.AnnotationQueue) (*domain.AnnotationQueue, error) {
	if err := s.checkScoreConfigs(ctx, q.WorkspaceID, q.ScoreConfigIDs); err != nil {
		return nil, err
	}
	if q.ID == "" {
		q.ID = NewID()
	}
	ids, err := jsonValue(nonNil(q.ScoreConfigIDs))
	if err != nil {
		return nil, err
	}
	_, err = s.exec(ctx, `INSERT INTO annotation_queues (id, workspace_id, name, description, score_config_ids, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6)`, q.ID, q.WorkspaceID, q.Name, q.Description, ids, domain.Now())
	if isUniqueViolation(err) {
		return nil, &ConflictError{Message: fmt.Sprintf("an annotation queue named %q already exists", q.Name)}
	}
	if err != nil {
		return nil, fmt.Errorf("insert annotation queue: %w", err)
	}
	return s.AnnotationQueueGet(ctx, q.WorkspaceID, q.ID)
}

// AnnotationQueueUpdate changes the given fields of a queue.
func (s *Store) AnnotationQueueUpdate(ctx context.Context, ws, id string, p domain.AnnotationQueuePatch) (*domain.AnnotationQueue, error) {
	var ids *jsonArg
	if p.ScoreConfigIDs != nil {
		if err := s.checkScoreConfigs(ctx, ws, *p.ScoreConfigIDs); err != nil {
			return nil, err
		}
		ids = &jsonArg{nonNil(*p.ScoreConfigIDs)}
	}
	err := s.update(ctx, "annotation queue", "annotation_queues", ws, id, []set{
		{"name", p.Name}, {"description", p.Description}, {"score_config_ids", ids},
	})
	if isUniqueViolation(err) {
		return nil, &ConflictError{Message: fmt.Sprintf("an annotation queue named %q already exists", *p.Name)}
	}
	if err != nil {
		return nil, err
	}
	return s.AnnotationQueueGet(ctx, ws, id)
}

// AnnotationQueueDelete removes a queue with its items and returns it as it was; the scores
// its reviews wrote stay.
func (s *Store) AnnotationQueueDelete(ctx context.Context, ws, id string) (*domain.AnnotationQueue, error) {
	return deleteAsWas(ctx, s, "annotation queue", "annotation_queues", ws, id, (*Store).AnnotationQueueGet, nil)
}

// AnnotationItemsAdd adds executions of the workspace to a queue, all or none, and returns
// the items added; an execution already in the queue is skipped (counted in skipped).
func (s *Store) AnnotationItemsAdd(ctx context.Context, ws, queueID string, executionIDs []string) (added []*domain.AnnotationItem, skipped int, err error) {
	err = s.InTx(ctx, func(tx *Store) error {
		added, skipped = nil, 0
		if _, err := tx.AnnotationQueueGet(ctx, ws, queueID); err != nil {
			return err
		}
		now := domain.Now()
		for i, eid := range executionIDs {
			var found int
			err := tx.r.QueryRowContext(ctx, "SELECT count(*) FROM executions WHERE workspace_id = $1 AND id = $2", ws, eid).Scan(&found)
			if err != nil {
				return fmt.Errorf("find execution %s: %w", eid, err)
			}
			if found == 0 {
				return &ReferenceError{Field: fmt.Sprintf("execution_ids[%d]", i), Resource: "execution", ID: eid}
			}
			id := NewID()
			res, err := tx.exec(ctx, `INSERT INTO annotation_items (id, workspace_id, queue_id, execution_id, status, created_at)
				VALUES ($1, $2, $3, $4, 'pending', $5) ON CONFLICT (queue_id, execution_id) DO NOTHING`, id, ws, queueID, eid, now)
			if err != nil {
				return fmt.Errorf("add execution %s to annotation queue %s: %w", eid, queueID, err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				skipped++
				continue
			}
			it, err := tx.AnnotationItemGet(ctx, ws, queueID, id)
			if err != nil {
				return err
			}
			added = append(added, it)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if added == nil {
		added = []*domain.AnnotationItem{}
	}
	return added, skipped, nil
}

// AnnotationItemList returns one page of a queue's items, newest first, optionally of one
// status, and the total.
func (s *Store) AnnotationItemList(ctx context.Context, ws, queueID, status string, p domain.Page) ([]*domain.AnnotationItem, int, error) {
	if _, err := s.AnnotationQueueGet(ctx, ws, queueID); err != nil {
		return nil, 0, err
	}
	where, args := whereClause("", ws, []cond{{"queue_id = $%d", queueID}, {"status = $%d", status}})
	return listPage(ctx, s, "annotation_items", annotationItemColumns, where, args, "", p, scanAnnotationItem)
}

// AnnotationItemGet returns one item of a queue.
func (s *Store) AnnotationItemGet(ctx context.Context, ws, queueID, id string) (*domain.AnnotationItem, error) {
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

// AnnotationNext claims the oldest pending item of a queue that nobody else holds a live
// claim on, for the reviewer until ttl from now, and returns it; an item the reviewer already
// holds comes back first, its claim renewed. Nothing left to claim is (nil, nil). Concurrent
// callers on any node never get the same item: the claim is a conditional update, tried
// again on the next item when another caller took this one first.
func (s *Store) AnnotationNext(ctx context.Context, ws, queueID string, who domain.Reviewer, ttl time.Duration) (*domain.AnnotationItem, error) {
	if _, err := s.AnnotationQueueGet(ctx, ws, queueID); err != nil {
		return nil, err
	}
	for {
		now := domain.Now()
		var id string
		err := s.r.QueryRowContext(ctx, `SELECT id FROM annotation_items
			WHERE queue_id = $1 AND status = 'pending' AND (claimed_by IS NULL OR claim_expires_at <= $2 OR claimed_by = $3)
			ORDER BY CASE WHEN claimed_by = $3 AND claim_expires_at > $2 THEN 0 ELSE 1 END, created_at, id LIMIT 1`,
			queueID, now, who.ID).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("find the next annotation item: %w", err)
		}
		res, err := s.exec(ctx, `UPDATE annotation_items SET claimed_by = $1, claimed_by_name = $2, claim_expires_at = $3
			WHERE id = $4 AND status = 'pending' AND (claimed_by IS NULL OR claim_expires_at <= $5 OR claimed_by = $1)`,
			who.ID, who.Name, domain.Time{Time: now.Add(ttl)}, id, now)
		if err != nil {
			return nil, fmt.Errorf("claim annotation item %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return s.AnnotationItemGet(ctx, ws, queueID, id)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

// AnnotationComplete writes a reviewer's scores of an item (source annotation, on the item's
// execution, each under one of the queue's score configs) and marks it completed, all or
// nothing. An item completed already, or claimed by someone else whose claim is live, is a
// *ConflictError.
func (s *Store) AnnotationComplete(ctx context.Context, ws, queueID, itemID string, who domain.Reviewer, author *domain.ScoreAuthor, scores []*domain.Score) (*domain.AnnotationItem, []*domain.Score, error) {
	var item *domain.AnnotationItem
	var written []*domain.Score
	err := s.InTx(ctx, func(tx *Store) error {
		written = nil
		q, err := tx.AnnotationQueueGet(ctx, ws, queueID)
		if err != nil {
			return err
		}
		it, err := tx.AnnotationItemGet(ctx, ws, queueID, itemID)
		if err != nil {
			return err
		}
		if it.Status == domain.AnnotationCompleted {
			return &ConflictError{Message: fmt.Sprintf("annotation item %s is completed already", itemID)}
		}
		if it.ClaimedBy != nil && *it.ClaimedBy != who.ID {
			return &ConflictError{Message: fmt.Sprintf("annotation item %s is claimed by %s until %s",
				itemID, domain.Deref(it.ClaimedByName), it.ClaimExpiresAt.Format(time.RFC3339))}
		}
		if len(scores) == 0 {
			return &ValidationError{Field: "scores", Message: "needs at least one score"}
		}
		allowed := map[string]bool{}
		for _, id := range q.ScoreConfigIDs {
			allowed[id] = true
		}
		for i, sc := range scores {
			if sc.ConfigID == nil || !allowed[*sc.ConfigID] {
				return &ValidationError{Field: fmt.Sprintf("scores[%d].config_id", i), Message: "must be one of the queue's score_config_ids"}
			}
			sc.WorkspaceID, sc.ExecutionID, sc.Source, sc.Author = ws, &it.ExecutionID, domain.ScoreSourceAnnotation, author
			out, err := tx.ScoreCreate(ctx, sc)
			if err != nil {
				var ve *ValidationError
				if errors.As(err, &ve) {
					return &ValidationError{Field: fmt.Sprintf("scores[%d].%s", i, ve.Field), Message: ve.Message}
				}
				return err
			}
			written = append(written, out)
		}
		if _, err := tx.exec(ctx, `UPDATE annotation_items SET status = 'completed', completed_by = $1, completed_by_name = $2,
			completed_at = $3, claimed_by = NULL, claimed_by_name = NULL, claim_expires_at = NULL WHERE id = $4`,
			who.ID, who.Name, domain.Now(), itemID); err != nil {
			return fmt.Errorf("complete annotation item %s: %w", itemID, err)
		}
		item, err = tx.AnnotationItemGet(ctx, ws, queueID, itemID)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return item, written, nil
}
