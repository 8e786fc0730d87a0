package client

import (
	"context"
	"net/http"
)

func annotationQueuePath(id string) string { return "/api/v1/annotation-queues/" + pathEscape(id) }

// AnnotationQueueList lists annotation queues, newest first.
func (c *Client) AnnotationQueueList(ctx context.Context, o ListAnnotationQueuesParams) (*List[AnnotationQueue], error) {
	return list[AnnotationQueue](ctx, c, "/api/v1/annotation-queues", query(o))
}

// AnnotationQueueCreate creates an annotation queue.
func (c *Client) AnnotationQueueCreate(ctx context.Context, in AnnotationQueueCreateRequest, opts ...RequestOption) (*AnnotationQueue, error) {
	return send[AnnotationQueue](ctx, c, http.MethodPost, "/api/v1/annotation-queues", in, opts...)
}

// AnnotationQueueGet gets a queue with its counts.
func (c *Client) AnnotationQueueGet(ctx context.Context, id string) (*AnnotationQueue, error) {
	return get[AnnotationQueue](ctx, c, annotationQueuePath(id), nil)
}

// AnnotationQueueUpdate changes a queue's name, description or score configs.
func (c *Client) AnnotationQueueUpdate(ctx context.Context, id string, in AnnotationQueueUpdateRequest) (*AnnotationQueue, error) {
	return send[AnnotationQueue](ctx, c, http.MethodPatch, annotationQueuePath(id), in)
}

// AnnotationQueueDelete deletes a queue and its items (not the scores), returning it.
func (c *Client) AnnotationQueueDelete(ctx context.Context, id string) (*AnnotationQueue, error) {
	return send[AnnotationQueue](ctx, c, http.MethodDelete, annotationQueuePath(id), nil)
}

// AnnotationItemList lists a queue's items, newest first; o.Status "" lists all.
func (c *Client) AnnotationItemList(ctx context.Context, queueID string, o ListAnnotationItemsParams) (*List[AnnotationItem], error) {
	return list[AnnotationItem](ctx, c, annotationQueuePath(queueID)+"/items", query(o))
}

// AnnotationItemsAdd adds executions (up to 1,000) to a queue, all or none.
func (c *Client) AnnotationItemsAdd(ctx context.Context, queueID string, executionIDs []string) (*AnnotationItemsAdded, error) {
	return send[AnnotationItemsAdded](ctx, c, http.MethodPost, annotationQueuePath(queueID)+"/items", map[string]any{"execution_ids": executionIDs})
}

// AnnotationNext claims the next item to review for 10 minutes (the one already held comes
// back first).
func (c *Client) AnnotationNext(ctx context.Context, queueID string) (*AnnotationClaim, error) {
	return send[AnnotationClaim](ctx, c, http.MethodPost, annotationQueuePath(queueID)+"/next", nil)
}

// AnnotationComplete writes the review's scores and marks the item completed.
func (c *Client) AnnotationComplete(ctx context.Context, queueID, itemID string, scores []AnnotationScore) (*AnnotationCompleted, error) {
	return send[AnnotationCompleted](ctx, c, http.MethodPost, annotationQueuePath(queueID)+"/items/"+pathEscape(itemID)+"/complete",
		map[string]any{"scores": scores})
}

// ScoreAgreement compares the newest score named o.Judge with the newest named o.Human on
// every execution that has both; an empty time leaves the window open.
func (c *Client) ScoreAgreement(ctx context.Context, o ScoreAgreementParams) (*ScoreAgreement, error) {
	return get[ScoreAgreement](ctx, c, "/api/v1/scores/agreement", query(o))
}
