package domain

import (
	"errors"
	"time"
)

// TriggerDedupWindow is how long an inbound event id is remembered: a retry of the same
// event within it runs nothing.
const TriggerDedupWindow = 24 * time.Hour

// Trigger starts executions of an agent: from calls to its hook URL (a generic webhook or a
// chat platform) or on a schedule. Its hook token is stored only as a SHA-256 hash, and the
// secrets of its config only sealed; reads show them masked.
type Trigger struct {
	ID          string     `json:"id"`
	WorkspaceID string     `json:"workspace_id"`
	AgentID     string     `json:"agent_id"`
	VersionID   *string    `json:"version_id" doc:"The agent version runs use; null runs the active version."`
	Type        string     `json:"type" doc:"The trigger type."`
	Name        string     `json:"name"`
	Enabled     bool       `json:"enabled"`
	Config      JSONObject `json:"config" doc:"The per-type settings; secret fields are shown masked."`
	// InputMapping maps each field of a run's input to a GJSON path into the event.
	InputMapping map[string]string `json:"input_mapping" doc:"Input field → GJSON path into the event (see the trigger docs); empty uses the type's default."`
	Input        JSONObject        `json:"input,omitempty" doc:"A schedule's fixed run input."`
	WebhookURL   string            `json:"webhook_url" doc:"Where the outcome of each run is POSTed when it ends; empty for none."`
	// WebhookSecret is the masked completion webhook secret ("" when none).
	WebhookSecret string `json:"webhook_secret" doc:"The completion webhook's signing secret, masked; empty when none. In the create or update answer that generated it (webhook_url given without webhook_secret), the whole secret, shown only then."`
	TokenPrefix   string `json:"token_prefix" doc:"The first characters of the hook token, for telling tokens apart; empty for schedules."`
	NextRunAt     *Time  `json:"next_run_at" doc:"A schedule's next tick; null for other types and disabled schedules."`
	LastRunAt     *Time  `json:"last_run_at" doc:"The scheduled time of the last tick that ran."`
	CreatedAt     Time   `json:"created_at"`
	UpdatedAt     Time   `json:"updated_at"`
}

// WebhookSecretKey is the TriggerSecrets key of the completion webhook's secret.
const WebhookSecretKey = "webhook_secret"

// TriggerSecrets are the secret values of a trigger, sealed together: its config's secret
// fields by name, and the completion webhook's secret under "webhook_secret".
type TriggerSecrets map[string]string

// TriggerFilter narrows TriggerList; empty fields match everything.
type TriggerFilter struct {
	AgentID string
	Type    string
}

// TriggerPatch holds the fields of a trigger to change; nil fields stay as they are. Config
// and Secrets, when set, replace the whole config and the whole set of secrets.
type TriggerPatch struct {
	Name         *string
	Enabled      *bool
	VersionID    **string
	Config       *JSONObject
	Secrets      *TriggerSecrets
	InputMapping *map[string]string
	Input        *JSONObject
	WebhookURL   *string
	// NextRunAt, when set, replaces the next tick (a nil *Time clears it).
	NextRunAt **Time
}

// ErrTickTaken says another scheduler claimed the tick first (or the schedule changed).
var ErrTickTaken = errors.New("schedule tick already claimed")
