package domain

// ChatSession is a conversation with an agent; its messages run as executions.
type ChatSession struct {
	ID                string     `json:"id"`
	WorkspaceID       string     `json:"workspace_id"`
	AgentID           string     `json:"agent_id"`
	Title             string     `json:"title"`
	Metadata          JSONObject `json:"metadata"`
	UserID            *string    `json:"user_id" doc:"The signed-in user who created it (bearer-token calls); null for API keys."`
	EndUserID         *string    `json:"end_user_id" doc:"The caller's own id for its end user; each message's run carries it unless the message names another."`
	MessageCount      int        `json:"message_count"`
	ActiveExecutionID *string    `json:"active_execution_id" doc:"The reply being generated, if any; a new message meanwhile is a 409."`
	LastMessageAt     *Time      `json:"last_message_at"`
	CreatedAt         Time       `json:"created_at"`
	UpdatedAt         Time       `json:"updated_at"`
}

// ChatMessage is one message of a session.
type ChatMessage struct {
	ID            string     `json:"id"`
	WorkspaceID   string     `json:"workspace_id"`
	SessionID     string     `json:"session_id"`
	Role          string     `json:"role" enum:"user,assistant"`
	Content       string     `json:"content"`
	ExecutionID   *string    `json:"execution_id" nullable:"false" doc:"The execution of the turn: a user message and the reply to it have the same."`
	UserMessageID *string    `json:"user_message_id" doc:"For an assistant message, the user message it answers."`
	TokenUsage    TokenUsage `json:"token_usage"`
	CreatedAt     Time       `json:"created_at"`
}

// ChatSessionFilter narrows ChatSessionList; empty fields match everything.
type ChatSessionFilter struct {
	AgentID, EndUserID string
}

// ChatSessionPatch holds the fields of a session to change.
type ChatSessionPatch struct {
	Title    *string
	Metadata *JSONObject
}
