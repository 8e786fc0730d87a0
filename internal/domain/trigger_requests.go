package domain

import (
	"encoding/json"
	"strings"
)

// TriggerTypeSchedule is the trigger type that runs its agent on a cron schedule, from a
// fixed input rather than an event.
const TriggerTypeSchedule = "schedule"

// TriggerCreateRequest is a new trigger as a client asks for it. The document checks its
// shape (lengths, the registered types); Validate holds the rest.
type TriggerCreateRequest struct {
	AgentID       string            `json:"agent_id" minLength:"1" pattern:"\\S" doc:"The agent the trigger runs."`
	Type          string            `json:"type" required:"true" doc:"The trigger type."`
	Name          string            `json:"name" minLength:"1" pattern:"\\S" maxLength:"200"`
	Enabled       *bool             `json:"enabled,omitempty" doc:"Default true."`
	VersionID     string            `json:"version_id,omitempty" doc:"Run this version of the agent instead of its active one."`
	Config        map[string]any    `json:"config,omitempty" doc:"Per-type settings; the document lists each type's keys."`
	InputMapping  map[string]string `json:"input_mapping,omitempty" doc:"How an event becomes the run's input: input field → GJSON path. A webhook's paths read its JSON body (default: the whole body is the input); a chat platform's read {text, user, payload} (default {\"message\": \"text\"}). Not for schedules."`
	Input         map[string]any    `json:"input,omitempty" doc:"A schedule's fixed run input, checked against the agent's input_schema. Only for schedules."`
	WebhookURL    string            `json:"webhook_url,omitempty" maxLength:"2000" doc:"An absolute http(s) URL told of each run's end (completion webhook); no fragment (#…), no user:password@ (the rule of every webhook URL)."`
	WebhookSecret string            `json:"webhook_secret,omitempty" maxLength:"1000" doc:"The completion webhook's Standard Webhooks signing secret (whsec_ + base64); generated and returned once when webhook_url is given without it; encrypted at rest, never returned again."`
}

// Validate holds a new trigger's rules: a name that is more than white space, a valid input
// mapping, a run input only for schedules and a mapping only for the others, and the rules of
// every completion webhook.
func (r *TriggerCreateRequest) Validate() error {
	if err := NotBlank("name", r.Name); err != nil {
		return err
	}
	if err := checkInputMapping(r.InputMapping); err != nil {
		return err
	}
	if err := CheckTriggerRunInput(r.Type, r.InputMapping, r.Input != nil); err != nil {
		return err
	}
	return CompletionWebhook{URL: nonEmpty(r.WebhookURL), Secret: nonEmpty(r.WebhookSecret), New: true}.Validate()
}

// TriggerUpdateRequest is a change to a trigger; a field left out stays as it is.
type TriggerUpdateRequest struct {
	Name          *string            `json:"name,omitempty" minLength:"1" pattern:"\\S" maxLength:"200"`
	Enabled       *bool              `json:"enabled,omitempty"`
	VersionID     json.RawMessage    `json:"version_id,omitempty" doc:"A version id of the trigger's agent, or null to run the active version."`
	Config        map[string]any     `json:"config,omitempty" doc:"Merged into the config key by key: a key set to null is removed. A secret left out (or sent back masked as read) keeps its value."`
	InputMapping  *map[string]string `json:"input_mapping,omitempty" doc:"Replaces the mapping; {} restores the type's default."`
	Input         *map[string]any    `json:"input,omitempty" doc:"Replaces a schedule's run input."`
	WebhookURL    *string            `json:"webhook_url,omitempty" maxLength:"2000" doc:"\"\" removes the completion webhook."`
	WebhookSecret *string            `json:"webhook_secret,omitempty" maxLength:"1000" doc:"A new completion webhook secret; \"\" removes it."`
}

// Validate holds the rules of a trigger change that need not know the trigger: a name that is
// more than white space, a valid input mapping and the rules of every completion webhook.
// Those that depend on its type are the trigger service's.
func (r *TriggerUpdateRequest) Validate() error {
	if err := NotBlankIfSet("name", r.Name); err != nil {
		return err
	}
	if r.InputMapping != nil {
		if err := checkInputMapping(*r.InputMapping); err != nil {
			return err
		}
	}
	return CompletionWebhook{URL: r.WebhookURL, Secret: r.WebhookSecret}.Validate()
}

// checkInputMapping validates an input_mapping: at most 50 fields, each a non-empty name
// and GJSON path.
func checkInputMapping(m map[string]string) error {
	if len(m) > 50 {
		return Invalid("input_mapping", "must have at most 50 fields")
	}
	for k, v := range m {
		if strings.TrimSpace(k) == "" || len(k) > 200 {
			return Invalid("input_mapping", "field names must be 1 to 200 characters")
		}
		if strings.TrimSpace(v) == "" || len(v) > 500 {
			return Invalid("input_mapping."+k, "must be a GJSON path of 1 to 500 characters, e.g. payload.event.text")
		}
	}
	return nil
}

// CheckTriggerRunInput says where a trigger's run input comes from: a schedule's from its fixed
// input (no mapping), any other type's from its events (no fixed input).
func CheckTriggerRunInput(typ string, mapping map[string]string, hasInput bool) error {
	if typ == TriggerTypeSchedule && len(mapping) > 0 {
		return Invalid("input_mapping", "does not apply to a schedule; its run input is the trigger's input")
	}
	if typ != TriggerTypeSchedule && hasInput {
		return Invalid("input", "is only for schedules; map a %s event to the run's input with input_mapping", typ)
	}
	return nil
}

// nonEmpty is v's address, or nil for "": an optional string field left out.
func nonEmpty(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}
