package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// AgentConfig is what one agent version runs with.
type AgentConfig struct {
	Model string `json:"model"`
	// CredentialID picks the model credential (default: the workspace's credential for the
	// model's provider).
	CredentialID string `json:"credential_id,omitempty"`
	// MaxRetries bounds retries of a failed model call (nil: 2); RequestTimeoutMS bounds one
	// model call (0: 120000).
	MaxRetries       *int            `json:"max_retries,omitempty"`
	RequestTimeoutMS int             `json:"request_timeout_ms,omitempty"`
	FallbackModels   []string        `json:"fallback_models,omitempty"` // tried in order when Model fails (retryable, after retries) or is known down
	SystemPrompt     string          `json:"system_prompt,omitempty"`
	PromptID         string          `json:"prompt_id,omitempty"`
	PromptVersionID  string          `json:"prompt_version_id,omitempty"`
	Temperature      *float64        `json:"temperature,omitempty"`
	MaxTokens        int             `json:"max_tokens,omitempty"`
	MaxIterations    int             `json:"max_iterations,omitempty"`
	InputSchema      json.RawMessage `json:"input_schema,omitempty"`
	OutputSchema     json.RawMessage `json:"output_schema,omitempty"`
	Tools            []ToolRef       `json:"tools,omitempty"`
	ToolTimeoutMS    int             `json:"tool_timeout_ms,omitempty"` // bounds one tool call (0: 30000)
	Guardrails       []string        `json:"guardrails,omitempty"`
	Approval         *ApprovalConfig `json:"approval,omitempty"`
	Steps            []AgentStep     `json:"steps,omitempty"`
	SubAgents        []string        `json:"sub_agents,omitempty"`
	Simulation       *Simulation     `json:"simulation,omitempty"`
	// Memory makes runs use memories; DataSources gives an agent a query_<name> tool per
	// data source id.
	Memory      *MemoryConfig `json:"memory,omitempty"`
	DataSources []string      `json:"data_sources,omitempty"`
	// AskUser gives an agent-type agent the ask_user tool: its question pauses the run until
	// answered (ExecutionDecide with Answer, or the next message of its chat session).
	AskUser bool `json:"ask_user,omitempty"`
}

// MemoryConfig says whether and how runs use memories: Scope is "agent" (default),
// "session" or "end_user"; MaxItems bounds the memories put into a prompt (0: 10).
type MemoryConfig struct {
	Enabled  bool   `json:"enabled"`
	Scope    string `json:"scope,omitempty"`
	MaxItems int    `json:"max_items,omitempty"`
}

// ApprovalConfig lists the human checkpoints of a run, the tools whose calls wait for a
// reviewer, and how long a decision may take.
type ApprovalConfig struct {
	Checkpoints []Checkpoint `json:"checkpoints"`
	// Tools: the first rule whose Match (a tool name or glob) fits a call's tool decides
	// whether it waits (Mode "always") or runs ("never", also when no rule fits).
	Tools []ToolApproval `json:"tools,omitempty"`
	// TimeoutSeconds bounds the wait; then OnTimeout ("reject", the default, or "approve") decides.
	TimeoutSeconds int    `json:"timeout_seconds,omitempty"`
	OnTimeout      string `json:"on_timeout,omitempty"`
}

// ToolApproval is one rule of ApprovalConfig.Tools.
type ToolApproval struct {
	Match string `json:"match"`
	Mode  string `json:"mode"`
}

// Checkpoint is a place where a run waits for a human decision.
type Checkpoint struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	When        string `json:"when"`
}

// AgentStep is one step of a chain or workflow agent.
type AgentStep struct {
	ID          string   `json:"id"`
	Name        string   `json:"name,omitempty"`
	Instruction string   `json:"instruction,omitempty"`
	AgentID     string   `json:"agent_id,omitempty"`
	DependsOn   []string `json:"depends_on,omitempty"`
}

// Simulation tunes the simulated model for a version. Fail fails every call after a few
// streamed words; FailModels instead fails the calls to the models it names at once, with
// the HTTP status given (503, say), as a provider that is down would: how retries and
// FallbackModels can be tried without a provider. Both travel as the "fail" field.
type Simulation struct {
	LatencyMS   int            `json:"-"`
	Fail        bool           `json:"-"`
	FailModels  map[string]int `json:"-"`
	FailMessage string         `json:"-"`
}

// simulationJSON is Simulation on the wire: fail is a boolean or an object of models.
type simulationJSON struct {
	LatencyMS   int             `json:"latency_ms,omitempty"`
	Fail        json.RawMessage `json:"fail,omitempty"`
	FailMessage string          `json:"fail_message,omitempty"`
}

// MarshalJSON writes fail as the object of FailModels when set, else as Fail.
func (s Simulation) MarshalJSON() ([]byte, error) {
	w := simulationJSON{LatencyMS: s.LatencyMS, FailMessage: s.FailMessage}
	switch {
	case len(s.FailModels) > 0:
		w.Fail, _ = json.Marshal(s.FailModels)
	case s.Fail:
		w.Fail = json.RawMessage("true")
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads fail as a boolean or an object of models.
func (s *Simulation) UnmarshalJSON(b []byte) error {
	var w simulationJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*s = Simulation{LatencyMS: w.LatencyMS, FailMessage: w.FailMessage}
	if len(w.Fail) > 0 && w.Fail[0] == '{' {
		return json.Unmarshal(w.Fail, &s.FailModels)
	}
	if len(w.Fail) > 0 {
		return json.Unmarshal(w.Fail, &s.Fail)
	}
	return nil
}

// Agent is a versioned agent; Config is its active version's.
type Agent struct {
	ID              string         `json:"id"`
	WorkspaceID     string         `json:"workspace_id"`
	Name            string         `json:"name"`
	Description     string         `json:"description"`
	Type            string         `json:"type"`
	Status          string         `json:"status"`
	Tags            []string       `json:"tags"`
	Metadata        map[string]any `json:"metadata"`
	ActiveVersionID *string        `json:"active_version_id"`
	ActiveVersion   *int           `json:"active_version"`
	VersionCount    int            `json:"version_count"`
	Config          *AgentConfig   `json:"config"`
	CreatedAt       time.Time      `json:"created_at"`
	UpdatedAt       time.Time      `json:"updated_at"`
	// WebhookURL receives each execution of the agent when it ends (nil: none).
	WebhookURL       *string `json:"webhook_url"`
	WebhookSecretSet bool    `json:"webhook_secret_set"`
	// WebhookSecret is set only in the response that generated it (create, PATCH of a first
	// webhook_url, rotation): keep it then, it is never shown again.
	WebhookSecret string `json:"webhook_secret,omitempty"`
}

// AgentVersion is one immutable configuration of an agent.
type AgentVersion struct {
	ID          string      `json:"id"`
	WorkspaceID string      `json:"workspace_id"`
	AgentID     string      `json:"agent_id"`
	Version     int         `json:"version"`
	Config      AgentConfig `json:"config"`
	Notes       string      `json:"notes"`
	IsActive    bool        `json:"is_active"`
	CreatedAt   time.Time   `json:"created_at"`
}

// AgentCreate is the body of AgentCreate.
type AgentCreate struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Type        string         `json:"type"`
	Status      string         `json:"status,omitempty"`
	Tags        []string       `json:"tags,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Config      *AgentConfig   `json:"config,omitempty"`
	Notes       string         `json:"notes,omitempty"`
	// WebhookURL sets a completion webhook; without WebhookSecret one is generated and
	// returned once in Agent.WebhookSecret.
	WebhookURL    string `json:"webhook_url,omitempty"`
	WebhookSecret string `json:"webhook_secret,omitempty"`
}

// AgentUpdate holds the fields to change; nil fields stay as they are.
type AgentUpdate struct {
	Name        *string         `json:"name,omitempty"`
	Description *string         `json:"description,omitempty"`
	Status      *string         `json:"status,omitempty"`
	Tags        *[]string       `json:"tags,omitempty"`
	Metadata    *map[string]any `json:"metadata,omitempty"`
	// WebhookURL sets the completion webhook; a pointer to "" removes it and its secret.
	WebhookURL    *string `json:"webhook_url,omitempty"`
	WebhookSecret *string `json:"webhook_secret,omitempty"`
}

// AgentListOptions filters AgentList.
type AgentListOptions struct {
	ListOptions
	Type   string
	Status string
	Query  string
}

// AgentPreviewRequest asks what an execution would send.
type AgentPreviewRequest struct {
	Input     map[string]any `json:"input"`
	VersionID string         `json:"version_id,omitempty"`
	Config    *AgentConfig   `json:"config,omitempty"`
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// AgentPreview is the outcome of a preview.
type AgentPreview struct {
	AgentID   string       `json:"agent_id"`
	VersionID *string      `json:"version_id"`
	Model     string       `json:"model"`
	Messages  []Message    `json:"messages"`
	Variables []string     `json:"variables"`
	Missing   []string     `json:"missing"`
	Config    *AgentConfig `json:"config"`
}

// AgentList lists agents, newest first.
func (c *Client) AgentList(ctx context.Context, o AgentListOptions) (*List[Agent], error) {
	q := o.values()
	setIf(q, "type", o.Type)
	setIf(q, "status", o.Status)
	setIf(q, "q", o.Query)
	return list[Agent](ctx, c, "/api/v1/agents", q)
}

// AgentCreate creates an agent and its active version 1.
func (c *Client) AgentCreate(ctx context.Context, in AgentCreate, opts ...RequestOption) (*Agent, error) {
	return send[Agent](ctx, c, http.MethodPost, "/api/v1/agents", in, opts...)
}

// AgentGet gets an agent.
func (c *Client) AgentGet(ctx context.Context, id string) (*Agent, error) {
	return get[Agent](ctx, c, "/api/v1/agents/"+pathEscape(id), nil)
}

// AgentUpdate changes an agent's fields.
func (c *Client) AgentUpdate(ctx context.Context, id string, in AgentUpdate) (*Agent, error) {
	return send[Agent](ctx, c, http.MethodPatch, "/api/v1/agents/"+pathEscape(id), in)
}

// AgentDelete deletes an agent and its versions, returning it.
func (c *Client) AgentDelete(ctx context.Context, id string) (*Agent, error) {
	return send[Agent](ctx, c, http.MethodDelete, "/api/v1/agents/"+pathEscape(id), nil)
}

// AgentVersionList lists an agent's versions, newest first.
func (c *Client) AgentVersionList(ctx context.Context, agentID string, o ListOptions) (*List[AgentVersion], error) {
	return list[AgentVersion](ctx, c, "/api/v1/agents/"+pathEscape(agentID)+"/versions", o.values())
}

// AgentVersionCreate adds a version (not active until promoted).
func (c *Client) AgentVersionCreate(ctx context.Context, agentID string, config AgentConfig, notes string, opts ...RequestOption) (*AgentVersion, error) {
	body := map[string]any{"config": config, "notes": notes}
	return send[AgentVersion](ctx, c, http.MethodPost, "/api/v1/agents/"+pathEscape(agentID)+"/versions", body, opts...)
}

// AgentVersionGet gets one version.
func (c *Client) AgentVersionGet(ctx context.Context, agentID, versionID string) (*AgentVersion, error) {
	return get[AgentVersion](ctx, c, "/api/v1/agents/"+pathEscape(agentID)+"/versions/"+pathEscape(versionID), nil)
}

// AgentVersionPromote makes a version active and returns the agent.
func (c *Client) AgentVersionPromote(ctx context.Context, agentID, versionID string) (*Agent, error) {
	return send[Agent](ctx, c, http.MethodPost, "/api/v1/agents/"+pathEscape(agentID)+"/versions/"+pathEscape(versionID)+"/promote", nil)
}

// AgentPreview validates input and shows the messages an execution would send.
func (c *Client) AgentPreview(ctx context.Context, agentID string, in AgentPreviewRequest) (*AgentPreview, error) {
	return send[AgentPreview](ctx, c, http.MethodPost, "/api/v1/agents/"+pathEscape(agentID)+"/preview", in)
}

// LLMModel is a model entry, of the built-in catalog or of the workspace (Source);
// prices are USD per million tokens.
type LLMModel struct {
	ID                    string    `json:"id"`
	Source                string    `json:"source"`
	Provider              string    `json:"provider"`
	Name                  string    `json:"name"`
	Description           string    `json:"description"`
	ContextWindow         int       `json:"context_window"`
	MaxOutputTokens       int       `json:"max_output_tokens"`
	InputPricePerMillion  float64   `json:"input_price_per_million"`
	OutputPricePerMillion float64   `json:"output_price_per_million"`
	Capabilities          []string  `json:"capabilities"`
	CreatedAt             time.Time `json:"created_at"`
	UpdatedAt             time.Time `json:"updated_at"`
}

// LLMModelCreate registers a workspace model (one the catalog lacks).
type LLMModelCreate struct {
	ID                    string   `json:"id"`
	Provider              string   `json:"provider"`
	Name                  string   `json:"name,omitempty"`
	Description           string   `json:"description,omitempty"`
	ContextWindow         int      `json:"context_window"`
	MaxOutputTokens       int      `json:"max_output_tokens,omitempty"`
	InputPricePerMillion  float64  `json:"input_price_per_million,omitempty"`
	OutputPricePerMillion float64  `json:"output_price_per_million,omitempty"`
	Capabilities          []string `json:"capabilities,omitempty"`
}

// LLMModelUpdate holds the fields of a workspace model to change; nil fields stay.
type LLMModelUpdate struct {
	Provider              *string   `json:"provider,omitempty"`
	Name                  *string   `json:"name,omitempty"`
	Description           *string   `json:"description,omitempty"`
	ContextWindow         *int      `json:"context_window,omitempty"`
	MaxOutputTokens       *int      `json:"max_output_tokens,omitempty"`
	InputPricePerMillion  *float64  `json:"input_price_per_million,omitempty"`
	OutputPricePerMillion *float64  `json:"output_price_per_million,omitempty"`
	Capabilities          *[]string `json:"capabilities,omitempty"`
}

// LLMModelListOptions filters LLMModelList.
type LLMModelListOptions struct {
	ListOptions
	Provider   string
	Capability string
	Query      string
	Source     string // "catalog" or "workspace"
}

// LLMModelList lists the model catalog.
func (c *Client) LLMModelList(ctx context.Context, o LLMModelListOptions) (*List[LLMModel], error) {
	q := o.values()
	setIf(q, "provider", o.Provider)
	setIf(q, "capability", o.Capability)
	setIf(q, "q", o.Query)
	setIf(q, "source", o.Source)
	return list[LLMModel](ctx, c, "/api/v1/llm-models", q)
}

// LLMModelCreate registers a workspace model.
func (c *Client) LLMModelCreate(ctx context.Context, in LLMModelCreate, opts ...RequestOption) (*LLMModel, error) {
	return send[LLMModel](ctx, c, http.MethodPost, "/api/v1/llm-models", in, opts...)
}

// LLMModelUpdate changes a workspace model (built-in entries are read-only: 403).
func (c *Client) LLMModelUpdate(ctx context.Context, id string, in LLMModelUpdate) (*LLMModel, error) {
	return send[LLMModel](ctx, c, http.MethodPatch, "/api/v1/llm-models/"+pathEscape(id), in)
}

// LLMModelDelete deletes a workspace model, returning it.
func (c *Client) LLMModelDelete(ctx context.Context, id string) (*LLMModel, error) {
	return send[LLMModel](ctx, c, http.MethodDelete, "/api/v1/llm-models/"+pathEscape(id), nil)
}

// LLMModelGet gets one model.
func (c *Client) LLMModelGet(ctx context.Context, id string) (*LLMModel, error) {
	return get[LLMModel](ctx, c, "/api/v1/llm-models/"+pathEscape(id), nil)
}

func setIf(q url.Values, k, v string) {
	if v != "" {
		q.Set(k, v)
	}
}

// setTime sets a time query parameter (RFC 3339, UTC) unless t is zero.
func setTime(q url.Values, k string, t time.Time) {
	if !t.IsZero() {
		q.Set(k, t.UTC().Format(time.RFC3339Nano))
	}
}
