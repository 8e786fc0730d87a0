package domain

// Memory is a piece of long-term knowledge kept for a workspace, or for one agent of it when
// AgentID is set; it is deleted with its agent.
type Memory struct {
	ID          string     `json:"id"`
	WorkspaceID string     `json:"workspace_id"`
	AgentID     *string    `json:"agent_id" doc:"The agent the memory belongs to; null for a workspace-wide memory."`
	SessionID   *string    `json:"session_id" doc:"The chat session the memory belongs to, if any (memory scope session)."`
	EndUserID   *string    `json:"end_user_id" doc:"The end user the memory is about, if any (memory scope end_user)."`
	Key         string     `json:"key" doc:"Optional lookup key, e.g. \"user.preferences\"."`
	Content     string     `json:"content"`
	Metadata    JSONObject `json:"metadata"`
	CreatedAt   Time       `json:"created_at"`
	UpdatedAt   Time       `json:"updated_at"`
}

// MemoryFilter narrows MemoryList; empty fields match everything.
type MemoryFilter struct {
	AgentID   string
	SessionID string
	EndUserID string
	Key       string // exact key
	Query     string // substring of key or content, case-insensitive
}

// MemoryPatch holds the fields of a memory to change; nil fields stay as they are. AgentID
// pointing to "" makes the memory workspace-wide.
type MemoryPatch struct {
	AgentID  *string
	Key      *string
	Content  *string
	Metadata *JSONObject
}

// MemoryScope selects the memories a run may use: those of one agent (its own, not those kept
// for one of its sessions or end users), one chat session or one end user (whichever agent
// stored them), within a workspace. Exactly one field is set.
type MemoryScope struct {
	AgentID   string
	SessionID string
	EndUserID string
}
