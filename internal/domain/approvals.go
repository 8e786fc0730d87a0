package domain

import "encoding/json"

// Approval kinds: a checkpoint of config.approval.checkpoints, tool calls that
// config.approval.tools holds back, or a question of the ask_user tool.
const (
	ApprovalCheckpoint = "checkpoint"
	ApprovalTools      = "tools"
	ApprovalQuestion   = "question"
)

// Approval is a human decision an execution waits for at a checkpoint.
type Approval struct {
	ID          string          `json:"id"`
	WorkspaceID string          `json:"workspace_id"`
	ExecutionID string          `json:"execution_id"`
	AgentID     string          `json:"agent_id"`
	AgentName   string          `json:"agent_name"`
	Kind        string          `json:"kind" enum:"checkpoint,tools,question" doc:"checkpoint (config.approval.checkpoints), tools (tool calls config.approval.tools holds back) or question (the ask_user tool)."`
	Checkpoint  string          `json:"checkpoint"`
	Description string          `json:"description"`
	Awaiting    json.RawMessage `json:"awaiting" doc:"What is awaiting the decision, e.g. {\"draft_output\": …}."`
	// Calls are the tool calls held back (tools and question kinds), each with its decision
	// once decided.
	Calls     []PendingCall `json:"calls" doc:"The tool calls waiting for the decision (kinds tools and question), each with its decision once decided."`
	Question  string        `json:"question,omitempty" doc:"The question of an approval of kind question."`
	Choices   []string      `json:"choices,omitempty" doc:"The answers a question offers, if it offers some."`
	Answer    string        `json:"answer,omitempty" doc:"The answer given to a question."`
	Status    string        `json:"status" enum:"pending,approved,denied,cancelled"`
	Comment   string        `json:"comment"`
	Reason    string        `json:"reason"`
	DecidedBy string        `json:"decided_by,omitempty" doc:"Who decided: user:<id>, api_key:<id>, timeout, or chat / trigger for an answer from a conversation."`
	// ExpiresAt and OnTimeout come from config.approval.timeout_seconds and on_timeout.
	ExpiresAt   *Time  `json:"expires_at,omitempty" doc:"When config.approval.timeout_seconds decides it, if set."`
	OnTimeout   string `json:"on_timeout,omitempty" enum:"reject,approve" doc:"What the timeout decides."`
	RequestedAt Time   `json:"requested_at"`
	DecidedAt   *Time  `json:"decided_at"`
}

// PendingCall is a tool call an approval holds back, and what the reviewer decided for it.
type PendingCall struct {
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// InputSchema is the tool's input schema, which edited arguments must satisfy.
	InputSchema json.RawMessage `json:"input_schema,omitempty" doc:"The tool's input schema: edited arguments must satisfy it."`
	Decision    string          `json:"decision,omitempty" enum:"approve,reject,edit" doc:"Once decided: approve, reject or edit."`
	Message     string          `json:"message,omitempty" doc:"Why a rejected call was rejected; the model reads it as the call's result."`
	// EditedArguments are what the call ran with instead of Arguments (decision edit).
	EditedArguments json.RawMessage `json:"edited_arguments,omitempty" doc:"The arguments the call ran with instead (decision edit)."`
}

// CallDecisions are the values of a pending call's decision.
var CallDecisions = []string{"approve", "reject", "edit"}

// ApprovalDecision is how a pending approval is closed.
type ApprovalDecision struct {
	Status    string        // approved, denied or cancelled
	Comment   string        // approved
	Reason    string        // denied
	DecidedBy string        // user:<id>, api_key:<id>, timeout …
	Calls     []PendingCall // the calls with their decisions; nil keeps them as they were
	Answer    string        // a question's answer
}
