package domain

// ChatMessageRequest is a user's message to a chat session.
type ChatMessageRequest struct {
	Content   string `json:"content" minLength:"1" pattern:"\\S" maxLength:"100000"`
	EndUserID string `json:"end_user_id,omitempty" maxLength:"200" doc:"Your own id for the end user; default: the session's."`
}

// Validate holds a message's rule: content that is more than white space.
func (r *ChatMessageRequest) Validate() error {
	return NotBlank("content", r.Content)
}
