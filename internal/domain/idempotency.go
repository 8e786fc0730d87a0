package domain

import (
	"encoding/json"
	"time"
)

// IdempotencyTTL is how long a stored response answers a repeated Idempotency-Key.
const IdempotencyTTL = 24 * time.Hour

// IdempotencyLease is how long a key stays claimed by a request in progress without being
// renewed: the process handling the request renews it while it works, so the lease only
// runs out when that process died (or lost its database), and then a retry takes over.
const IdempotencyLease = 60 * time.Second

// idempotencyChatTurn is the Status of a record that stands for a chat turn: its Response
// is a ChatTurnRef, and the turn's execution is the answer to replay.
const IdempotencyChatTurn = 1

// IdempotencyRecord is the first response to a request made with an Idempotency-Key. Status 0
// means that request is still being handled (or its process died: see LockedUntil).
type IdempotencyRecord struct {
	RequestHash string
	Status      int
	Response    string
	// ExecutionID is the execution the request created, once it did (execute and playground).
	ExecutionID string
	// LockedUntil is when the lease of a request in progress runs out.
	LockedUntil Time
}

// ChatTurn returns the chat turn a record stands for, if it is a chat turn's record.
func (r *IdempotencyRecord) ChatTurn() (*ChatTurnRef, bool) {
	if r.Status != IdempotencyChatTurn {
		return nil, false
	}
	var ref ChatTurnRef
	if json.Unmarshal([]byte(r.Response), &ref) != nil || ref.ExecutionID == "" {
		return nil, false
	}
	return &ref, true
}

// ChatTurnRef is the chat turn an Idempotency-Key started: a retry with the key follows that
// turn's execution instead of starting another.
type ChatTurnRef struct {
	ExecutionID   string `json:"execution_id"`
	UserMessageID string `json:"user_message_id"`
}

// IdempotencyClaim is an Idempotency-Key held by the request this process is handling. Its
// Token fences the holder: renewing, linking, finishing and releasing act only while the
// record still carries it, so a process whose lease was taken over changes nothing.
type IdempotencyClaim struct {
	Workspace string
	Key       string
	Token     string
	// TakenOver is set when the claim took the key over from a request whose lease ran out.
	TakenOver bool
	// ExecutionID, on a taken-over claim, is the execution the earlier request had created:
	// the answer is that execution, not a second one.
	ExecutionID string
}
