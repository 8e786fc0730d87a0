package domain

import (
	"encoding/json"
	"path"

	"github.com/agentplane/agentplane/internal/schemacheck"
)

// AgentStatuses lists an agent's statuses. Its types are declared in internal/agentconfig.
var AgentStatuses = []string{"active", "inactive", "archived"}

// AgentConfig is what one agent version runs with.
type AgentConfig struct {
	Model string `json:"model" minLength:"1" pattern:"\\S" maxLength:"200"`
	// CredentialID picks the model credential; without it, the workspace's credential for
	// the model's provider is used.
	CredentialID     string          `json:"credential_id,omitempty" doc:"The model-provider credential runs use; default: the workspace's credential for the model's provider (the one with metadata.default true, else the newest)."`
	MaxRetries       *int            `json:"max_retries,omitempty" minimum:"0" maximum:"10" doc:"How many times a model call is retried on a connection error, 429, 500, 502, 503 or 529 (default 2), only while nothing of it has streamed."`
	FallbackModels   []string        `json:"fallback_models,omitempty" maxItems:"5" doc:"Models tried in order when the model (or the fallback before) fails with a retryable error after its retries (a connection error, a timeout, 429, 500, 502, 503 or 529), or is known down (its circuit is open), and nothing of the call has streamed yet. Each must serve what the version needs (tools, structured output, images) by its catalog capabilities."`
	RequestTimeoutMS int             `json:"request_timeout_ms,omitempty" minimum:"1" maximum:"3600000" doc:"Bound of one model call, retries included, in ms (default 120000)."`
	SystemPrompt     string          `json:"system_prompt,omitempty"`
	PromptID         string          `json:"prompt_id,omitempty"`
	PromptVersionID  string          `json:"prompt_version_id,omitempty"`
	Temperature      *float64        `json:"temperature,omitempty"`
	MaxTokens        int             `json:"max_tokens,omitempty"`
	MaxIterations    int             `json:"max_iterations,omitempty"`
	InputSchema      json.RawMessage `json:"input_schema,omitempty"`
	OutputSchema     json.RawMessage `json:"output_schema,omitempty"`
	Tools            []ToolRef       `json:"tools,omitempty" doc:"The MCP servers whose tools the agent may call: an MCP tool id (all its tools), or {\"mcp_tool_id\", \"names\"} for some of them."`
	ToolTimeoutMS    int             `json:"tool_timeout_ms,omitempty" minimum:"1" maximum:"3600000" doc:"Bound of one tool call in ms, connecting to its server included (default 30000); a call that runs out answers the model with an error."`
	Guardrails       []string        `json:"guardrails,omitempty"`
	Approval         *ApprovalConfig `json:"approval,omitempty"`
	Steps            []AgentStep     `json:"steps,omitempty"`
	SubAgents        []string        `json:"sub_agents,omitempty"`
	Simulation       *Simulation     `json:"simulation,omitempty"`
	// Memory and DataSources are what an agent remembers and what data it may read (see
	// runtime/memory.go and runtime/datatools.go).
	Memory      *MemoryConfig `json:"memory,omitempty" doc:"Long-term memory: the most relevant memories of the scope go into the prompt, and an agent-type agent gets a remember tool that stores one."`
	DataSources []string      `json:"data_sources,omitempty" doc:"Data source ids; an agent-type agent gets a query_<name> tool for each, described with the tables and columns of its catalog."`
	// AskUser gives an agent-type agent the ask_user tool (runtime/askuser.go).
	AskUser bool `json:"ask_user,omitempty" doc:"Gives an agent-type agent an ask_user tool (question, optional choices): calling it pauses the run awaiting_approval with an approval of kind question, and the answer (POST /executions/{id}/approve with answer, or the next message of its chat session or trigger thread) is the tool's result."`
}

// MemoryConfig says whether and how runs use memories.
type MemoryConfig struct {
	Enabled bool   `json:"enabled" doc:"Whether runs use memories."`
	Scope   string `json:"scope,omitempty" enum:"agent,session,end_user" doc:"Whose memories: the agent's own (default), the run's chat session's, or the run's end user's (end_user_id)."`
	// MaxItems bounds the memories put into a prompt.
	MaxItems int `json:"max_items,omitempty" minimum:"1" maximum:"100" doc:"Most memories put into the prompt (default 10)."`
}

// MemoryScopes are the values of config.memory.scope.
var MemoryScopes = []string{"agent", "session", "end_user"}

// ToolRef names an MCP server whose tools a version may call: all of them, or those in
// Names. It is written as the server's id alone when Names is empty, and as
// {"mcp_tool_id", "names"} otherwise; both forms are read.
type ToolRef struct {
	MCPToolID string   `json:"mcp_tool_id" minLength:"1" pattern:"\\S"`
	Names     []string `json:"names,omitempty"`
}

// MarshalJSON writes the id alone when the reference takes all the server's tools.
func (t ToolRef) MarshalJSON() ([]byte, error) {
	if t.Names == nil {
		return json.Marshal(t.MCPToolID)
	}
	type plain ToolRef
	return json.Marshal(plain(t))
}

// UnmarshalJSON reads an id or an object.
func (t *ToolRef) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		*t = ToolRef{}
		return json.Unmarshal(b, &t.MCPToolID)
	}
	type plain ToolRef
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*t = ToolRef(p)
	return nil
}

// ToolIDs returns the ids of the MCP servers the config's tools name.
func (c *AgentConfig) ToolIDs() []string {
	ids := make([]string, len(c.Tools))
	for i, t := range c.Tools {
		ids[i] = t.MCPToolID
	}
	return ids
}

// ApprovalConfig lists the human checkpoints of a run, the tools whose calls wait for a
// reviewer, and how long a decision may take.
type ApprovalConfig struct {
	Checkpoints []Checkpoint `json:"checkpoints"`
	// Tools decides per tool call whether it waits for a reviewer: the first rule whose
	// match fits the tool's name wins; no rule fitting means never.
	Tools []ToolApproval `json:"tools,omitempty" doc:"Per-tool approval: the first rule whose match (a tool name or a glob such as crm__delete_*) fits a call's tool decides; mode always pauses the run awaiting_approval with the call pending, never lets it run. No rule fitting: never."`
	// TimeoutSeconds bounds how long an approval of this version waits; then OnTimeout decides.
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" minimum:"1" maximum:"2592000" doc:"How long an approval waits for a decision (up to 30 days); then on_timeout decides it. Default: it waits until decided."`
	OnTimeout      string `json:"on_timeout,omitempty" enum:"reject,approve" doc:"What a timeout decides: reject (default; pending tool calls are rejected and the run goes on, a checkpoint is denied) or approve."`
}

// ToolApproval is one rule of config.approval.tools.
type ToolApproval struct {
	Match string `json:"match" minLength:"1" pattern:"\\S" maxLength:"200" doc:"A tool name as the model sees it, or a glob (* any run of characters, ? one)."`
	Mode  string `json:"mode" enum:"always,never"`
}

// ApprovalModes are the values of a config.approval.tools rule's mode.
var ApprovalModes = []string{"always", "never"}

// NeedsApproval reports whether a call of the named tool waits for a reviewer: the first
// rule whose match fits decides.
func (a *ApprovalConfig) NeedsApproval(tool string) bool {
	if a == nil {
		return false
	}
	for _, r := range a.Tools {
		if ok, err := path.Match(r.Match, tool); err == nil && ok {
			return r.Mode == "always"
		}
	}
	return false
}

// MarshalJSON writes checkpoints as [] when there are none (a config sent as
// "approval": {}), never as null.
func (a ApprovalConfig) MarshalJSON() ([]byte, error) {
	type plain ApprovalConfig
	if a.Checkpoints == nil {
		a.Checkpoints = []Checkpoint{}
	}
	return json.Marshal(plain(a))
}

// Checkpoint is one place where a run waits for a human decision.
type Checkpoint struct {
	Name        string `json:"name" minLength:"1" pattern:"\\S"`
	Description string `json:"description,omitempty"`
	When        string `json:"when" enum:"before_output,before_tools"`
}

// AgentStep is one step of a chain or workflow agent.
type AgentStep struct {
	ID          string   `json:"id" minLength:"1" pattern:"\\S"`
	Name        string   `json:"name,omitempty"`
	Instruction string   `json:"instruction,omitempty"`
	AgentID     string   `json:"agent_id,omitempty"`
	DependsOn   []string `json:"depends_on,omitempty"`
}

// Simulation makes a version run on the simulated model, tuned: latency per streamed event
// and forced failure. Its presence alone selects the simulated model, on every server.
type Simulation struct {
	LatencyMS   int      `json:"latency_ms,omitempty"`
	Fail        *SimFail `json:"fail,omitempty"`
	FailMessage string   `json:"fail_message,omitempty"`
}

// SimFail is config.simulation.fail: true fails every call after a few words (a failure
// once streaming has begun, never retried); an object of model id to HTTP status fails
// the calls to those models at once with that status, as a provider would, so that
// retries and config.fallback_models can be watched.
type SimFail struct {
	All    bool           `json:"-"`
	Models map[string]int `json:"-"`
}

// MarshalJSON writes the object of models when there is one, else a boolean.
func (f SimFail) MarshalJSON() ([]byte, error) {
	if len(f.Models) > 0 {
		return json.Marshal(f.Models)
	}
	return json.Marshal(f.All)
}

// UnmarshalJSON reads a boolean or an object of model id to status.
func (f *SimFail) UnmarshalJSON(b []byte) error {
	*f = SimFail{}
	if len(b) > 0 && b[0] == '{' {
		return json.Unmarshal(b, &f.Models)
	}
	return json.Unmarshal(b, &f.All)
}

// SimFailStatuses are the statuses config.simulation.fail may give a model.
var SimFailStatuses = []int{400, 401, 403, 404, 429, 500, 502, 503, 504, 529}

// Agent is a named, versioned agent definition; Config is that of its active version.
type Agent struct {
	ID              string       `json:"id"`
	WorkspaceID     string       `json:"workspace_id"`
	Name            string       `json:"name"`
	Description     string       `json:"description"`
	Type            string       `json:"type" doc:"The agent type."`
	Status          string       `json:"status" enum:"active,inactive,archived"`
	Tags            Strings      `json:"tags"`
	Metadata        JSONObject   `json:"metadata"`
	ActiveVersionID *string      `json:"active_version_id"`
	ActiveVersion   *int         `json:"active_version"`
	VersionCount    int          `json:"version_count"`
	Config          *AgentConfig `json:"config"`
	CreatedAt       Time         `json:"created_at"`
	UpdatedAt       Time         `json:"updated_at"`

	// Completion webhook (see internal/webhook): the secret itself is stored sealed and only
	// ever returned in the response that generated it.
	WebhookURL       *string `json:"webhook_url" doc:"Each execution of the agent is POSTed here when it ends (completed, failed, cancelled, rejected), signed with the Standard Webhooks scheme; null when none."`
	WebhookSecretSet bool    `json:"webhook_secret_set" doc:"Whether a signing secret is stored (it is never returned after the response that generated it)."`
	WebhookSecret    string  `json:"webhook_secret,omitempty" doc:"The signing secret (whsec_ + base64), only in the response of the request that generated it: store it then."`
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
	CreatedAt   Time        `json:"created_at"`
}

// AgentFilter narrows AgentList; empty fields match everything.
type AgentFilter struct {
	Type   string
	Status string
	Query  string // substring of name or description, case-insensitive
}

// AgentPatch holds the fields of an agent to change; nil fields stay as they are.
type AgentPatch struct {
	Name        *string
	Description *string
	Status      *string
	Tags        *Strings
	Metadata    *JSONObject
}

// CheckInput checks a run's input against the config's input_schema (none when absent or
// null): a schema that does not compile is a FieldError naming config.input_schema, an input
// it refuses one naming input.
func (c *AgentConfig) CheckInput(input map[string]any) error {
	if !schemaSet(c.InputSchema) {
		return nil
	}
	sch, err := schemacheck.Compile(c.InputSchema)
	if err != nil {
		return Invalid("config.input_schema", "%s", err.Error())
	}
	if err := sch.Validate(input); err != nil {
		return Invalid("input", "%s", err.Error())
	}
	return nil
}
