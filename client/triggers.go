package client

import (
	"context"
	"net/http"
	"net/url"
)

// TriggerList lists triggers, newest first.
func (c *Client) TriggerList(ctx context.Context, o ListAgentTriggersParams) (*List[Trigger], error) {
	return list[Trigger](ctx, c, "/api/v1/agent-triggers", query(o))
}

// TriggerCreate creates a trigger; the answer holds its hook token and URL (not for schedules).
func (c *Client) TriggerCreate(ctx context.Context, in TriggerCreateRequest) (*TriggerWithToken, error) {
	return send[TriggerWithToken](ctx, c, http.MethodPost, "/api/v1/agent-triggers", in)
}

// TriggerGet gets a trigger (secrets masked, no token).
func (c *Client) TriggerGet(ctx context.Context, id string) (*Trigger, error) {
	return get[Trigger](ctx, c, "/api/v1/agent-triggers/"+pathEscape(id), url.Values{})
}

// TriggerUpdate changes a trigger's fields.
func (c *Client) TriggerUpdate(ctx context.Context, id string, in TriggerUpdateRequest) (*Trigger, error) {
	return send[Trigger](ctx, c, http.MethodPatch, "/api/v1/agent-triggers/"+pathEscape(id), in)
}

// TriggerRotate issues a new hook token; the old one stops working at once.
func (c *Client) TriggerRotate(ctx context.Context, id string) (*TriggerWithToken, error) {
	return send[TriggerWithToken](ctx, c, http.MethodPost, "/api/v1/agent-triggers/"+pathEscape(id)+"/rotate", nil)
}

// TriggerDelete deletes a trigger, returning it.
func (c *Client) TriggerDelete(ctx context.Context, id string) (*Trigger, error) {
	return send[Trigger](ctx, c, http.MethodDelete, "/api/v1/agent-triggers/"+pathEscape(id), nil)
}
