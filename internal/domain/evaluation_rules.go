package domain

// EvaluationRule scores finished executions with an evaluator as they end (online
// evaluation): those of one agent (or of all), matching Filter, a Sampling share of them.
// Package eval holds the rules of matching and sampling; the store keeps rules and the
// judgments they call for.
type EvaluationRule struct {
	ID          string     `json:"id"`
	WorkspaceID string     `json:"workspace_id"`
	EvaluatorID string     `json:"evaluator_id" doc:"The evaluator that scores the executions."`
	AgentID     *string    `json:"agent_id" doc:"The agent whose executions are scored; null for every agent of the workspace."`
	Sampling    float64    `json:"sampling" minimum:"0" maximum:"1" doc:"The share of matching executions scored, from 0 to 1. Which ones is decided by a hash of the rule's and the execution's ids: the same execution is always in or out."`
	Filter      RuleFilter `json:"filter"`
	Enabled     bool       `json:"enabled" doc:"A disabled rule scores nothing; executions that ended while it was disabled are not scored later."`
	Judgments   Judgments  `json:"judgments" doc:"How many judgments the rule has asked for, by state."`
	CreatedAt   Time       `json:"created_at"`
	UpdatedAt   Time       `json:"updated_at"`
}

// RuleFilter says which finished executions a rule scores; every condition set must hold.
type RuleFilter struct {
	Status   []string   `json:"status" doc:"The execution's final status is one of these (completed, failed, cancelled, rejected)."`
	Source   []string   `json:"source" doc:"The execution's source is one of these (api, chat, webhook, schedule, …); empty for any."`
	Metadata JSONObject `json:"metadata" doc:"Each key's value equals the execution's metadata value of that key (compared as JSON); empty for any."`
}

// Judgments counts a rule's judgments by state.
type Judgments struct {
	Pending   int `json:"pending" doc:"Waiting to be judged (or being judged, or retried after a failure)."`
	Completed int `json:"completed" doc:"Judged: the score is written."`
	Failed    int `json:"failed" doc:"Given up: the evaluator could not judge the execution (last_error on the judgment says why)."`
}

// Judgment states.
const (
	JudgmentPending   = "pending"
	JudgmentCompleted = "completed"
	JudgmentFailed    = "failed"
)

// Judgment is one execution a rule scores: pending until a judge claims it under a lease and
// writes its score (completed), or gives up (failed).
type Judgment struct {
	ID          string  `json:"id"`
	WorkspaceID string  `json:"workspace_id"`
	RuleID      string  `json:"rule_id"`
	ExecutionID string  `json:"execution_id"`
	Status      string  `json:"status" enum:"pending,completed,failed"`
	Attempts    int     `json:"attempts" doc:"How many times a judge took it (a retry after a failure, or a takeover after a node died, counts)."`
	ScoreID     *string `json:"score_id" doc:"The score it gave, once completed."`
	LastError   *string `json:"last_error" doc:"Why the last attempt failed; null when none did."`
	CreatedAt   Time    `json:"created_at" doc:"When the execution ended."`
	UpdatedAt   Time    `json:"updated_at"`
}

// JudgmentStatuses lists the states of a judgment.
var JudgmentStatuses = []string{JudgmentPending, JudgmentCompleted, JudgmentFailed}

// EvaluationRuleFilter narrows EvaluationRuleList; zero fields match everything.
type EvaluationRuleFilter struct {
	EvaluatorID, AgentID string
}
