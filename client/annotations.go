package client

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// AnnotationQueue is a list of executions for people to score under its score configs.
type AnnotationQueue struct {
	ID             string    `json:"id"`
	WorkspaceID    string    `json:"workspace_id"`
	Name           string    `json:"name"`
	Description    string    `json:"description"`
	ScoreConfigIDs []string  `json:"score_config_ids"`
	Pending        int       `json:"pending"`
	Completed      int       `json:"completed"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// AnnotationQueueCreate is the body of AnnotationQueueCreate.
type AnnotationQueueCreate struct {
	Name           string   `json:"name"`
	Description    string   `json:"description,omitempty"`
	ScoreConfigIDs []string `json:"score_config_ids"`
}

// AnnotationQueueUpdate holds the fields to change; nil fields stay.
type AnnotationQueueUpdate struct {
	Name           *string   `json:"name,omitempty"`
	Description    *string   `json:"description,omitempty"`
	ScoreConfigIDs *[]string `json:"score_config_ids,omitempty"`
}

// AnnotationItem is one execution of a queue, pending or completed.
type AnnotationItem struct {
	ID              string     `json:"id"`
	WorkspaceID     string     `json:"workspace_id"`
	QueueID         string     `json:"queue_id"`
	ExecutionID     string     `json:"execution_id"`
	Status          string     `json:"status"` // "pending" or "completed"
	ClaimedBy       *string    `json:"claimed_by"`
	ClaimedByName   *string    `json:"claimed_by_name"`
	ClaimExpiresAt  *time.Time `json:"claim_expires_at"`
	CompletedBy     *string    `json:"completed_by"`
	CompletedByName *string    `json:"completed_by_name"`
	CompletedAt     *time.Time `json:"completed_at"`
	CreatedAt       time.Time  `json:"created_at"`
}

// AnnotationItemsAdded is what adding executions to a queue made.
type AnnotationItemsAdded struct {
	Added   []AnnotationItem `json:"added"`
	Skipped int              `json:"skipped"`
}

// AnnotationClaim is the item claimed by AnnotationNext, with its execution and queue; Item
// is nil when nothing is left to claim.
type AnnotationClaim struct {
	Item      *AnnotationItem  `json:"item"`
	Execution *Execution       `json:"execution"`
	Queue     *AnnotationQueue `json:"queue"`
}

// AnnotationScore is one score of a review, under one of the queue's score configs.
type AnnotationScore struct {
	ConfigID    string         `json:"config_id"`
	Value       *float64       `json:"value,omitempty"`
	StringValue *string        `json:"string_value,omitempty"`
	Comment     string         `json:"comment,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// AnnotationCompleted is the completed item and the scores written.
type AnnotationCompleted struct {
	Item   AnnotationItem `json:"item"`
	Scores []Score        `json:"scores"`
}

// ScoreAgreement compares two score names on the executions that have both.
type ScoreAgreement struct {
	Judge                  string   `json:"judge"`
	Human                  string   `json:"human"`
	DataType               *string  `json:"data_type"`
	Count                  int      `json:"count"`
	ExactAgreement         *float64 `json:"exact_agreement"`
	Kappa                  *float64 `json:"kappa"`
	Pearson                *float64 `json:"pearson"`
	MeanAbsoluteDifference *float64 `json:"mean_absolute_difference"`
}

func annotationQueuePath(id string) string { return "/api/v1/annotation-queues/" + pathEscape(id) }

// AnnotationQueueList lists annotation queues, newest first.
func (c *Client) AnnotationQueueList(ctx context.Context, o ListOptions) (*List[AnnotationQueue], error) {
	return list[AnnotationQueue](ctx, c, "/api/v1/annotation-queues", o.values())
}

// AnnotationQueueCreate creates an annotation queue.
func (c *Client) AnnotationQueueCreate(ctx context.Context, in AnnotationQueueCreate, opts ...RequestOption) (*AnnotationQueue, error) {
	return send[AnnotationQueue](ctx, c, http.MethodPost, "/api/v1/annotation-queues", in, opts...)
}

// AnnotationQueueGet gets a queue with its counts.
func (c *Client) AnnotationQueueGet(ctx context.Context, id string) (*AnnotationQueue, error) {
	return get[AnnotationQueue](ctx, c, annotationQueuePath(id), nil)
}

// AnnotationQueueUpdate changes a queue's name, description or score configs.
func (c *Client) AnnotationQueueUpdate(ctx context.Context, id string, in AnnotationQueueUpdate) (*AnnotationQueue, error) {
	return send[AnnotationQueue](ctx, c, http.MethodPatch, annotationQueuePath(id), in)
}

// AnnotationQueueDelete deletes a queue and its items (not the scores), returning it.
func (c *Client) AnnotationQueueDelete(ctx context.Context, id string) (*AnnotationQueue, error) {
	return send[AnnotationQueue](ctx, c, http.MethodDelete, annotationQueuePath(id), nil)
}

// AnnotationItemList lists a queue's items, newest first; status "" lists all.
func (c *Client) AnnotationItemList(ctx context.Context, queueID, status string, o ListOptions) (*List[AnnotationItem], error) {
	q := o.values()
	if status != "" {
		q.Set("status", status)
	}
	return list[AnnotationItem](ctx, c, annotationQueuePath(queueID)+"/items", q)
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

// ScoreAgreement compares the newest score named judge with the newest named human on every
// execution that has both; zero times leave the window open.
func (c *Client) ScoreAgreement(ctx context.Context, judge, human string, after, before time.Time) (*ScoreAgreement, error) {
	q := url.Values{"judge": {judge}, "human": {human}}
	setTime(q, "created_after", after)
	setTime(q, "created_before", before)
	return get[ScoreAgreement](ctx, c, "/api/v1/scores/agreement", q)
}
