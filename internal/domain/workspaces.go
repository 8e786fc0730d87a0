package domain

// Workspace is a tenant: every other resource belongs to exactly one.
type Workspace struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Slug string `json:"slug"`
	// RetentionDays is how long executions and ingested traces are kept; 0 keeps them forever.
	RetentionDays int `json:"retention_days" minimum:"0" doc:"Days executions (with their frames, traces, spans, approvals and scores) and ingested traces are kept after they were created; 0 keeps them forever. The server's --max-retention-days, when set, caps it."`
	// DeletedAt is set once the workspace is deleted; its rows are then purged in the background.
	DeletedAt *Time `json:"deleted_at,omitempty" doc:"When the workspace was deleted (only in the answer to DELETE); its data is then deleted in the background."`
	CreatedAt Time  `json:"created_at"`
	UpdatedAt Time  `json:"updated_at"`
}

// WorkspaceRetention is a live workspace's retention setting.
type WorkspaceRetention struct {
	ID   string
	Days int
}
