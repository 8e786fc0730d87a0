package domain

// MemoryContentMaxBytes bounds a memory's content, in bytes (the document counts characters).
const MemoryContentMaxBytes = 64 << 10

// MemoryCreateRequest is a new memory.
type MemoryCreateRequest struct {
	AgentID   *string        `json:"agent_id,omitempty" doc:"The agent the memory belongs to; leave out for a workspace-wide memory."`
	SessionID *string        `json:"session_id,omitempty" doc:"The chat session the memory belongs to (runs with config.memory.scope session use it)."`
	EndUserID *string        `json:"end_user_id,omitempty" maxLength:"200" doc:"The end user the memory is about (runs with config.memory.scope end_user for that end_user_id use it)."`
	Key       string         `json:"key,omitempty" maxLength:"200" doc:"Optional lookup key."`
	Content   string         `json:"content" minLength:"1" pattern:"\\S" doc:"The memory itself; at most 64 KiB."`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// Validate holds a new memory's rule: content that is more than white space, at most 64 KiB.
func (r *MemoryCreateRequest) Validate() error {
	return checkMemoryContent(r.Content)
}

// MemoryUpdateRequest is a change to a memory; a field left out stays as it is.
type MemoryUpdateRequest struct {
	AgentID  *string         `json:"agent_id,omitempty" doc:"An empty string makes the memory workspace-wide."`
	Key      *string         `json:"key,omitempty" maxLength:"200"`
	Content  *string         `json:"content,omitempty" minLength:"1" pattern:"\\S"`
	Metadata *map[string]any `json:"metadata,omitempty" doc:"Replaces the whole object."`
}

// Validate holds the rule of a memory change: new content as a new memory's.
func (r *MemoryUpdateRequest) Validate() error {
	if r.Content == nil {
		return nil
	}
	return checkMemoryContent(*r.Content)
}

func checkMemoryContent(content string) error {
	if err := NotBlank("content", content); err != nil {
		return err
	}
	if len(content) > MemoryContentMaxBytes {
		return Invalid("content", "must be at most %d bytes (64 KiB), got %d", MemoryContentMaxBytes, len(content))
	}
	return nil
}
