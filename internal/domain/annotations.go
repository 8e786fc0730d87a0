package domain

// AnnotationQueue is a list of executions for people to score under the queue's score
// configs: a reviewer claims the next pending item, scores it and completes it.
type AnnotationQueue struct {
	ID             string  `json:"id"`
	WorkspaceID    string  `json:"workspace_id"`
	Name           string  `json:"name" doc:"Unique in the workspace."`
	Description    string  `json:"description"`
	ScoreConfigIDs Strings `json:"score_config_ids" doc:"The score configs reviewers score items under; a completed item's scores each name one of them."`
	Pending        int     `json:"pending" doc:"Items not reviewed yet (claimed or not)."`
	Completed      int     `json:"completed" doc:"Items reviewed."`
	CreatedAt      Time    `json:"created_at"`
	UpdatedAt      Time    `json:"updated_at"`
}

// Annotation item states.
const (
	AnnotationPending   = "pending"
	AnnotationCompleted = "completed"
)

// AnnotationStatuses lists the states of an annotation item.
var AnnotationStatuses = []string{AnnotationPending, AnnotationCompleted}

// Reviewer is who claims and completes annotation items: "api_key:<id>" or "user:<id>" with a
// name to show (the key's prefix or the user's email).
type Reviewer struct {
	ID   string
	Name string
}

// AnnotationItem is one execution of a queue, waiting for review or reviewed.
type AnnotationItem struct {
	ID              string  `json:"id"`
	WorkspaceID     string  `json:"workspace_id"`
	QueueID         string  `json:"queue_id"`
	ExecutionID     string  `json:"execution_id"`
	Status          string  `json:"status" enum:"pending,completed"`
	ClaimedBy       *string `json:"claimed_by" doc:"Who holds the item's claim (api_key:<id> or user:<id>); null when unclaimed or the claim has expired."`
	ClaimedByName   *string `json:"claimed_by_name" doc:"The claim holder's key prefix or email."`
	ClaimExpiresAt  *Time   `json:"claim_expires_at" doc:"When the claim ends and another reviewer may take the item."`
	CompletedBy     *string `json:"completed_by" doc:"Who completed the item."`
	CompletedByName *string `json:"completed_by_name"`
	CompletedAt     *Time   `json:"completed_at"`
	CreatedAt       Time    `json:"created_at"`
}

// AnnotationQueuePatch holds the fields of a queue to change; nil fields stay as they are.
type AnnotationQueuePatch struct {
	Name           *string
	Description    *string
	ScoreConfigIDs *Strings
}
