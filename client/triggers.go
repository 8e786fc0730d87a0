package client

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// Trigger starts runs of an agent from a webhook, a chat platform or a schedule. Its
// secrets are only ever shown masked, and its hook token only by TriggerCreate and
// TriggerRotate.
type Trigger struct {
	ID            string            `json:"id"`
	WorkspaceID   string            `json:"workspace_id"`
	AgentID       string            `json:"agent_id"`
	VersionID     *string           `json:"version_id"`
	Type          string            `json:"type"`
	Name          string            `json:"name"`
	Enabled       bool              `json:"enabled"`
	Config        map[string]any    `json:"config"`
	InputMapping  map[string]string `json:"input_mapping"`
	Input         map[string]any    `json:"input,omitempty"`
	WebhookURL    string            `json:"webhook_url"`
	WebhookSecret string            `json:"webhook_secret"`
	TokenPrefix   string            `json:"token_prefix"`
	NextRunAt     *time.Time        `json:"next_run_at"`
	LastRunAt     *time.Time        `json:"last_run_at"`
	CreatedAt     time.Time         `json:"created_at"`
	UpdatedAt     time.Time         `json:"updated_at"`
	// Token and HookURL are set only in the answers of TriggerCreate and TriggerRotate.
	Token   string `json:"token,omitempty"`
	HookURL string `json:"hook_url,omitempty"`
}

// TriggerCreate is the body of TriggerCreate.
type TriggerCreate struct {
	AgentID       string            `json:"agent_id"`
	Type          string            `json:"type"`
	Name          string            `json:"name"`
	Enabled       *bool             `json:"enabled,omitempty"`
	VersionID     string            `json:"version_id,omitempty"`
	Config        map[string]any    `json:"config,omitempty"`
	InputMapping  map[string]string `json:"input_mapping,omitempty"`
	Input         map[string]any    `json:"input,omitempty"`
	WebhookURL    string            `json:"webhook_url,omitempty"`
	WebhookSecret string            `json:"webhook_secret,omitempty"`
}

// TriggerUpdate holds the fields to change; nil fields stay as they are. Config is merged
// key by key (a nil value removes a key).
type TriggerUpdate struct {
	Name          *string            `json:"name,omitempty"`
	Enabled       *bool              `json:"enabled,omitempty"`
	Config        map[string]any     `json:"config,omitempty"`
	InputMapping  *map[string]string `json:"input_mapping,omitempty"`
	Input         *map[string]any    `json:"input,omitempty"`
	WebhookURL    *string            `json:"webhook_url,omitempty"`
	WebhookSecret *string            `json:"webhook_secret,omitempty"`
}

// TriggerListOptions filters TriggerList.
type TriggerListOptions struct {
	ListOptions
	AgentID string
	Type    string
}

// TriggerList lists triggers, newest first.
func (c *Client) TriggerList(ctx context.Context, o TriggerListOptions) (*List[Trigger], error) {
	q := o.values()
	setIf(q, "agent_id", o.AgentID)
	setIf(q, "type", o.Type)
	return list[Trigger](ctx, c, "/api/v1/agent-triggers", q)
}

// TriggerCreate creates a trigger; the answer holds its hook token and URL (not for schedules).
func (c *Client) TriggerCreate(ctx context.Context, in TriggerCreate) (*Trigger, error) {
	return send[Trigger](ctx, c, http.MethodPost, "/api/v1/agent-triggers", in)
}

// TriggerGet gets a trigger (secrets masked, no token).
func (c *Client) TriggerGet(ctx context.Context, id string) (*Trigger, error) {
	return get[Trigger](ctx, c, "/api/v1/agent-triggers/"+pathEscape(id), url.Values{})
}

// TriggerUpdate changes a trigger's fields.
func (c *Client) TriggerUpdate(ctx context.Context, id string, in TriggerUpdate) (*Trigger, error) {
	return send[Trigger](ctx, c, http.MethodPatch, "/api/v1/agent-triggers/"+pathEscape(id), in)
}

// TriggerRotate issues a new hook token; the old one stops working at once.
func (c *Client) TriggerRotate(ctx context.Context, id string) (*Trigger, error) {
	return send[Trigger](ctx, c, http.MethodPost, "/api/v1/agent-triggers/"+pathEscape(id)+"/rotate", nil)
}

// TriggerDelete deletes a trigger, returning it.
func (c *Client) TriggerDelete(ctx context.Context, id string) (*Trigger, error) {
	return send[Trigger](ctx, c, http.MethodDelete, "/api/v1/agent-triggers/"+pathEscape(id), nil)
}
