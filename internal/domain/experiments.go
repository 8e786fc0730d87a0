package domain

import (
	"encoding/json"
	"errors"
)

// Experiment statuses: pending until a node takes it, running while its items run, then one
// of the three terminal ones.
const (
	ExperimentPending   = "pending"
	ExperimentRunning   = "running"
	ExperimentCompleted = "completed"
	ExperimentFailed    = "failed"
	ExperimentCancelled = "cancelled"
)

// Statuses of an experiment's item: pending until its execution is created, running until
// that execution ends and the evaluators have scored it, then completed or failed (the
// execution's outcome), or cancelled with its experiment before it started.
const (
	ItemPending   = "pending"
	ItemRunning   = "running"
	ItemCompleted = "completed"
	ItemFailed    = "failed"
	ItemCancelled = "cancelled"
)

// ExperimentProgress counts an experiment's items: all of them, and those finished.
type ExperimentProgress struct {
	Total     int `json:"total"`
	Completed int `json:"completed" doc:"Items whose execution completed (and was scored)."`
	Failed    int `json:"failed" doc:"Items whose execution failed, was cancelled or was interrupted."`
}

// Experiment runs an agent version on every item of a dataset, each as an execution, and
// scores each run with evaluators.
type Experiment struct {
	ID             string             `json:"id"`
	WorkspaceID    string             `json:"workspace_id"`
	Name           string             `json:"name"`
	DatasetID      string             `json:"dataset_id"`
	DatasetVersion int                `json:"dataset_version" doc:"The dataset's version when the experiment was created: its items were copied then."`
	AgentID        string             `json:"agent_id"`
	VersionID      string             `json:"version_id" doc:"The agent version run: the one asked for, else the version active at creation."`
	EvaluatorIDs   Strings            `json:"evaluator_ids"`
	Concurrency    int                `json:"concurrency" doc:"How many items run at once."`
	Metadata       JSONObject         `json:"metadata"`
	Status         string             `json:"status" enum:"pending,running,completed,failed,cancelled"`
	Error          *string            `json:"error" doc:"Why the experiment failed; null otherwise."`
	Progress       ExperimentProgress `json:"progress"`
	Summary        *ExperimentSummary `json:"summary,omitempty" doc:"The scores, cost, tokens and latency of the items finished so far (on GET of one experiment)."`
	CreatedAt      Time               `json:"created_at"`
	StartedAt      *Time              `json:"started_at"`
	CompletedAt    *Time              `json:"completed_at"`
	UpdatedAt      Time               `json:"updated_at"`

	// OwnerNode is the node driving the experiment until LeaseExpiresAt (Unix ms).
	OwnerNode      *string `json:"-"`
	LeaseExpiresAt *int64  `json:"-"`
}

// ExperimentSummary sums up the finished items of an experiment.
type ExperimentSummary struct {
	Scores      []ScoreStat `json:"scores" doc:"One entry per score name, sorted by name."`
	Cost        float64     `json:"cost" doc:"USD, the executions' total."`
	TotalTokens int         `json:"total_tokens"`
	LatencyP50  *int64      `json:"latency_p50_ms" doc:"Median duration of the items' executions; null before any finished."`
	LatencyP95  *int64      `json:"latency_p95_ms"`
}

// ScoreStat is what the scores of one name came to: the mean of numbers (numeric and boolean
// scores), or how often each label was given (categorical).
type ScoreStat struct {
	Name         string         `json:"name"`
	Count        int            `json:"count"`
	Mean         *float64       `json:"mean" doc:"Numeric and boolean scores (1 true, 0 false); null for categorical."`
	Distribution map[string]int `json:"distribution,omitempty" doc:"Categorical scores: label to count."`
}

// ExperimentItem is one item of an experiment and what became of it: a row of its results.
type ExperimentItem struct {
	ItemID         string          `json:"item_id"`
	Position       int             `json:"position" doc:"The item's place in the dataset (oldest first) when the experiment was created."`
	ExecutionID    *string         `json:"execution_id" doc:"The item's last execution: the one its outcome is of."`
	Attempts       int             `json:"attempts" doc:"How many executions the item had (0 until it starts): more than one when a server stopped during its run and it ran again (see GET /executions?experiment_id=, which lists them all)."`
	Status         string          `json:"status" enum:"pending,running,completed,failed,cancelled"`
	Input          JSONObject      `json:"input"`
	Output         json.RawMessage `json:"output" doc:"The execution's output; null until it completed."`
	ExpectedOutput json.RawMessage `json:"expected_output"`
	Error          *string         `json:"error" doc:"Why the execution (or an evaluator) failed."`
	Scores         JSONObject      `json:"scores" doc:"Score name to value: a number (numeric; boolean as 1 or 0) or a label (categorical)."`
	Cost           float64         `json:"cost"`
	TotalTokens    int             `json:"total_tokens"`
	DurationMS     *int64          `json:"duration_ms"`
	Metadata       JSONObject      `json:"-"`
	DoneSeq        *int            `json:"-"`
}

// ExperimentFilter narrows ExperimentList; zero fields match everything.
type ExperimentFilter struct {
	DatasetID, AgentID, Status string
}

// ItemMaxAttempts bounds the executions of one experiment item. An item whose execution was
// interrupted (its server stopped after the run's first model call, so no answer reached the
// platform) runs again as a new execution, while it has had fewer than this many.
const ItemMaxAttempts = 3

// ErrItemTaken says an experiment item already has its execution, or its experiment is no
// longer running: the caller must not run it.
var ErrItemTaken = errors.New("the experiment item is taken or its experiment is not running")

// ItemOutcome is what became of an item's execution, written by ExperimentItemFinish.
type ItemOutcome struct {
	Status      string // ItemCompleted or ItemFailed
	Output      json.RawMessage
	Error       *string
	Scores      JSONObject
	Cost        float64
	TotalTokens int
	DurationMS  *int64
	// ExecutionID, when set, is the execution the outcome is of: the item is recorded only
	// while it still points at it (not after it ran again as another execution).
	ExecutionID string
}
