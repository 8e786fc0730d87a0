package domain

import "encoding/json"

// Execution statuses (API.md section 4).
const (
	StatusPending          = "pending"
	StatusRunning          = "running"
	StatusCompleted        = "completed"
	StatusFailed           = "failed"
	StatusCancelled        = "cancelled"
	StatusAwaitingApproval = "awaiting_approval"
	StatusRejected         = "rejected"
)

// ExecutionStatuses lists every status, for validation and documentation.
var ExecutionStatuses = []string{StatusPending, StatusRunning, StatusCompleted, StatusFailed, StatusCancelled, StatusAwaitingApproval, StatusRejected}

// ExecutionSources lists the sources an execution can record besides trigger types: a run a
// trigger starts records the trigger's type, and the API document lists the registered ones.
var ExecutionSources = []string{"api", "chat", "studio", "playground", "openai", "mcp", "agent", "experiment"}

// ExecutionMove is what happens to an execution; the lifecycle says which status each move
// leads to from each status it is allowed in.
type ExecutionMove string

// The moves of the lifecycle.
const (
	MoveClaim    ExecutionMove = "claim"    // a node takes a queued execution (ExecutionClaim)
	MoveComplete ExecutionMove = "complete" // its run answered
	MoveFail     ExecutionMove = "fail"     // its run failed, or its node stopped (a rescue)
	MoveCancel   ExecutionMove = "cancel"   // a user cancelled it
	MovePause    ExecutionMove = "pause"    // its run waits at an approval checkpoint
	MoveResume   ExecutionMove = "resume"   // an approval was decided: a pass runs on
	MoveReject   ExecutionMove = "reject"   // an approval was denied
	MoveRequeue  ExecutionMove = "requeue"  // a drain stopped it before any model call (ExecutionRequeue)
)

// ExecutionMoves lists every move, for tests and documentation.
var ExecutionMoves = []ExecutionMove{MoveClaim, MoveComplete, MoveFail, MoveCancel, MovePause, MoveResume, MoveReject, MoveRequeue}

// lifecycle is the execution state machine, in one place: from each status, the status each
// allowed move leads to. Every status change consults it; a status with no moves is final.
var lifecycle = map[string]map[ExecutionMove]string{
	StatusPending: {MoveClaim: StatusRunning, MoveCancel: StatusCancelled},
	StatusRunning: {MoveComplete: StatusCompleted, MoveFail: StatusFailed, MoveCancel: StatusCancelled,
		MovePause: StatusAwaitingApproval, MoveRequeue: StatusPending},
	StatusAwaitingApproval: {MoveResume: StatusRunning, MoveReject: StatusRejected, MoveCancel: StatusCancelled},
}

// NextStatus returns the status a move leads to from a status; ok is false when the
// lifecycle does not allow the move there.
func NextStatus(from string, m ExecutionMove) (to string, ok bool) {
	to, ok = lifecycle[from][m]
	return to, ok
}

// Status is the status the move leads to (the same from every status it is allowed in).
func (m ExecutionMove) Status() string {
	for _, tos := range lifecycle {
		if to, ok := tos[m]; ok {
			return to
		}
	}
	return ""
}

// CanTransition reports whether some move of the lifecycle leads from one status to another.
func CanTransition(from, to string) bool {
	for _, t := range lifecycle[from] {
		if t == to {
			return true
		}
	}
	return false
}

// IsTerminal reports whether a status is final.
func IsTerminal(status string) bool { _, ok := lifecycle[status]; return !ok }

// TokenUsage counts the tokens of an execution, a span or a chat message.
type TokenUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Add returns the sum of two usages.
func (u TokenUsage) Add(o TokenUsage) TokenUsage {
	p, c := u.PromptTokens+o.PromptTokens, u.CompletionTokens+o.CompletionTokens
	return TokenUsage{PromptTokens: p, CompletionTokens: c, TotalTokens: p + c}
}

// Execution is one run of an agent: the ledger entry.
type Execution struct {
	ID             string          `json:"id"`
	WorkspaceID    string          `json:"workspace_id"`
	AgentID        string          `json:"agent_id"`
	AgentVersionID *string         `json:"agent_version_id" doc:"Null for a playground run of an unsaved config."`
	ParentID       *string         `json:"parent_id"`
	RootID         string          `json:"root_id" doc:"The top execution of this one's tree (itself when it has no parent)."`
	SessionID      *string         `json:"session_id"`
	Source         string          `json:"source" example:"api" doc:"What started the run. Known values: api, chat, studio, playground, openai (the OpenAI-compatible API), mcp (an agent called as an MCP tool), agent (a sub-agent run), experiment (an item of an experiment), or the type of the trigger that started it. The set is open: new trigger types add values, so this is not a closed enum and clients should accept others."`
	UserID         *string         `json:"user_id" doc:"The signed-in user who started it (bearer-token calls); null for API keys."`
	EndUserID      *string         `json:"end_user_id" doc:"The caller's own id for its end user, as sent on execute, playground or chat."`
	Status         string          `json:"status" enum:"pending,running,completed,failed,cancelled,awaiting_approval,rejected"`
	Input          JSONObject      `json:"input"`
	Output         json.RawMessage `json:"output" doc:"The result: {\"content\": text}, or an object matching the version's output_schema; null until completed."`
	Error          *string         `json:"error"`
	Metadata       JSONObject      `json:"metadata"`
	TokenUsage     TokenUsage      `json:"token_usage"`
	Cost           float64         `json:"cost" doc:"USD, from the model catalog's prices."`
	Model          *string         `json:"model" doc:"The model that answered the run's last model call: the version's model, or the fallback that answered when it failed (config.fallback_models); null before any answer."`
	DurationMS     *int64          `json:"duration_ms"`
	TraceID        string          `json:"trace_id"`
	TimeoutMS      int             `json:"timeout_ms"`
	CreatedAt      Time            `json:"created_at"`
	StartedAt      *Time           `json:"started_at"`
	CompletedAt    *Time           `json:"completed_at"`
	UpdatedAt      Time            `json:"updated_at"`

	// Config is the configuration the run uses (a version's, or an unsaved playground one);
	// State is the engine's resume point. Neither is part of the API.
	Config *AgentConfig    `json:"-"` // nil for a version's run once read back: see AgentVersionID
	State  json.RawMessage `json:"-"`

	// The lease of a running execution (see leases.go); none of it is part of the API.
	// OwnerNode is the node running it, until LeaseExpiresAt (Unix ms, the database's clock);
	// Attempt counts the passes that took the row; ModelCalled says the current pass reached a
	// model call; SeqReserved is the highest frame id the pass may have sent.
	OwnerNode      *string `json:"-"`
	LeaseExpiresAt *int64  `json:"-"`
	Attempt        int     `json:"-"`
	ModelCalled    bool    `json:"-"`
	SeqReserved    int     `json:"-"`
	// Claim, when set on ExecutionCreate of a running execution, makes the caller its owner.
	Claim *Claim `json:"-"`
}

// ExecutionNode is an execution with its child executions, for the tree view.
type ExecutionNode struct {
	*Execution
	Children []*ExecutionNode `json:"children"`
}

// ExecutionFilter narrows ExecutionList.
type ExecutionFilter struct {
	AgentID, Status, SessionID, Source, EndUserID string
	ExperimentID                                  string // the runs of an experiment's items
	CreatedAfter, CreatedBefore                   Time
}

// ExecutionPatch holds the fields a transition writes; nil fields stay as they are.
type ExecutionPatch struct {
	// Move, when set, is the lifecycle move made: only the statuses it leads to `to` from
	// are left (without it, any move leading there).
	Move        ExecutionMove
	Output      json.RawMessage
	Error       *string
	Usage       *TokenUsage
	Cost        *float64
	Model       *string // the model that answered last
	StartedAt   *Time
	CompletedAt *Time
	DurationMS  *int64
	State       json.RawMessage // written when non-nil; use ClearState to erase
	ClearState  bool
	// From, when set, allows the move only from this status: the caller decided on a read of
	// it (a cancel of a pending execution must not land on the run a worker just claimed).
	From string
	// Claim, on a move to running, makes the caller the owner of the new pass (see Claim).
	// Any move out of running ends the lease.
	Claim *Claim
	// SeqUsed records the last frame id the ending pass used (its frames are stored with the
	// move), giving back the rest of its reserved block.
	SeqUsed *int
	// Owner allows the move only while this pass holds the row: a pass that lost its lease
	// to a rescue must not write over what the rescue decided.
	Owner *Owner
	// Attempt allows the move only for this pass of the row (see Execution.Attempt).
	Attempt *int
	// LeaseExpired allows the move only when the row's lease has expired: a node closing the
	// run of a node that stopped, never a live one.
	LeaseExpired bool
	// Trace, when set, records the execution's trace's outcome with the move (see
	// TraceFinish; its status is the new one): on PostgreSQL in the same statement.
	Trace *TraceEnd
}

// TraceEnd is what TraceFinish records of a trace besides its status.
type TraceEnd struct {
	Usage      TokenUsage
	Cost       float64
	EndedAt    Time
	DurationMS int64
}

// Event is one frame of an execution's event log, as streamed over SSE.
type Event struct {
	Seq   int             `json:"seq"`
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data"`
}
