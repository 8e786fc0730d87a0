package domain

import "time"

// TriggerReply is the reply a chat platform message is owed once its run stops: where it
// goes (the platform's ReplyTo), and whether it was sent.
type TriggerReply struct {
	ExecutionID string
	WorkspaceID string
	TriggerID   string
	ReplyTo     map[string]string
	Status      string // pending, sent or failed
	Attempts    int
	LastError   string
}

// The statuses of a TriggerReply.
const (
	ReplyPending = "pending"
	ReplySent    = "sent"
	ReplyFailed  = "failed"
)

// TriggerReplyRetention is how long the record of a sent (or given up) reply is kept.
const TriggerReplyRetention = 7 * 24 * time.Hour
