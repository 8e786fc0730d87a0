package domain

import "time"

// Usage dimensions: what GET /traces/usage groups the runs' cost and tokens by.
const (
	UsageByModel   = "model"
	UsageByEndUser = "end_user"
)

// UsageDimensions lists the dimensions of UsageBreakdown, for validation and documentation.
var UsageDimensions = []string{UsageByModel, UsageByEndUser}

// UsageGroup is the sum of the ended runs sharing one model or one end user.
type UsageGroup struct {
	Key        string     `json:"key" doc:"The model (\"\" for runs that called none) or the end user id."`
	Runs       int64      `json:"runs" doc:"Runs that ended in the window."`
	Errors     int64      `json:"errors" doc:"Runs that failed."`
	TokenUsage TokenUsage `json:"token_usage"`
	Cost       float64    `json:"cost"`
}

// UsageFilter selects the rollups UsageBreakdown sums.
type UsageFilter struct {
	Dimension string // UsageByModel or UsageByEndUser
	AgentID   string // "" for every agent
	From, To  Time   // created_at window: From is rounded down to its period by the caller
	Period    time.Duration
	Limit     int // the costliest groups kept
}
