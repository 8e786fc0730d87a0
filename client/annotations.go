package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// AnnotationQueue holds executions for people to score under its score configs.
type AnnotationQueue struct {
	ID             string    `json:"id"`
	WorkspaceID    string    `json:"workspace_id"`
	Name           string    `json:"name"`
	Description    string    `json:"description"`
	ScoreConfigIDs []string  `json:"score_config_ids"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// AnnotationQueueCreate is the body of AnnotationQueueCreate.
type AnnotationQueueCreate struct {
	Name           string   `json:"name"`
	Description    string   `json:"description,omitempty"`
	ScoreConfigIDs []string `json:"score_config_ids"`
}

// AnnotationItem is one execution of a queue: pending, claimed (by ClaimedBy until
// ClaimExpiresAt) or completed.
type AnnotationItem struct {
	ID             string     `json:"id"`
	WorkspaceID    string     `json:"workspace_id"`
	QueueID        string     `json:"queue_id"`
	ExecutionID    string     `json:"execution_id"`
	Status         string     `json:"status"`
	ClaimedBy      *string    `json:"claimed_by"`
	ClaimExpiresAt *time.Time `json:"claim_expires_at"`
	CompletedAt    *time.Time `json:"completed_at"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
}

// AnnotationItemsAdded is the answer to AnnotationItemsAdd.
type AnnotationItemsAdded struct {
	Count int              `json:"count"`
	Items []AnnotationItem `json:"items"`
}

// AnnotationScore is one score of a completed item, under one of the queue's configs.
type AnnotationScore struct {
	ConfigID    string   `json:"config_id"`
	Value       *float64 `json:"value,omitempty"`
	StringValue *string  `json:"string_value,omitempty"`
	Comment     string   `json:"comment,omitempty"`
}

// AnnotationCompleted is a completed item and the scores it recorded.
type AnnotationCompleted struct {
	Item   AnnotationItem `json:"item"`
	Scores []Score        `json:"scores"`
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

// AnnotationQueueGet gets an annotation queue.
func (c *Client) AnnotationQueueGet(ctx context.Context, id string) (*AnnotationQueue, error) {
	return get[AnnotationQueue](ctx, c, annotationQueuePath(id), nil)
}

// AnnotationItemList lists a queue's items, newest first.
func (c *Client) AnnotationItemList(ctx context.Context, id string, o ListOptions) (*List[AnnotationItem], error) {
	return list[AnnotationItem](ctx, c, annotationQueuePath(id)+"/items", o.values())
}

// AnnotationItemsAdd adds executions to a queue (those already in it are skipped).
func (c *Client) AnnotationItemsAdd(ctx context.Context, id string, executionIDs []string, opts ...RequestOption) (*AnnotationItemsAdded, error) {
	return send[AnnotationItemsAdded](ctx, c, http.MethodPost, annotationQueuePath(id)+"/items", map[string]any{"execution_ids": executionIDs}, opts...)
}

// AnnotationItemNext claims the next item to review for 10 minutes; nil when none is left.
func (c *Client) AnnotationItemNext(ctx context.Context, id string) (*AnnotationItem, error) {
	status, raw, h, err := c.Raw(ctx, http.MethodPost, annotationQueuePath(id)+"/next", nil, nil)
	switch {
	case err != nil:
		return nil, err
	case status == http.StatusNoContent:
		return nil, nil
	case status >= 400:
		return nil, decodeError(&http.Response{StatusCode: status, Header: h}, raw)
	}
	var env struct {
		Data *AnnotationItem `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, fmt.Errorf("decode response: %w", err)
	}
	return env.Data, nil
}

// AnnotationItemComplete records the caller's scores of a claimed item and completes it.
func (c *Client) AnnotationItemComplete(ctx context.Context, id, itemID string, scores []AnnotationScore) (*AnnotationCompleted, error) {
	return send[AnnotationCompleted](ctx, c, http.MethodPost, annotationQueuePath(id)+"/items/"+pathEscape(itemID)+"/complete",
		map[string]any{"scores": scores})
}
