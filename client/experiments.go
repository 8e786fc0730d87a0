package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ExperimentProgress counts an experiment's items: all, and those finished.
type ExperimentProgress struct {
	Total     int `json:"total"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
}

// ScoreStat is what the scores of one name came to in an experiment: the mean of numbers
// (numeric and boolean), or how often each label was given (categorical).
type ScoreStat struct {
	Name         string         `json:"name"`
	Count        int            `json:"count"`
	Mean         *float64       `json:"mean"`
	Distribution map[string]int `json:"distribution"`
}

// ExperimentSummary sums up the finished items of an experiment.
type ExperimentSummary struct {
	Scores      []ScoreStat `json:"scores"`
	Cost        float64     `json:"cost"`
	TotalTokens int         `json:"total_tokens"`
	LatencyP50  *int64      `json:"latency_p50_ms"`
	LatencyP95  *int64      `json:"latency_p95_ms"`
}

// Score returns the stat of a score name, or nil.
func (s *ExperimentSummary) Score(name string) *ScoreStat {
	for i := range s.Scores {
		if s.Scores[i].Name == name {
			return &s.Scores[i]
		}
	}
	return nil
}

// Experiment runs an agent version on every item of a dataset, each run scored by evaluators.
type Experiment struct {
	ID             string             `json:"id"`
	WorkspaceID    string             `json:"workspace_id"`
	Name           string             `json:"name"`
	DatasetID      string             `json:"dataset_id"`
	DatasetVersion int                `json:"dataset_version"`
	AgentID        string             `json:"agent_id"`
	VersionID      string             `json:"version_id"`
	EvaluatorIDs   []string           `json:"evaluator_ids"`
	Concurrency    int                `json:"concurrency"`
	Metadata       map[string]any     `json:"metadata"`
	Status         string             `json:"status"`
	Error          *string            `json:"error"`
	Progress       ExperimentProgress `json:"progress"`
	Summary        *ExperimentSummary `json:"summary"`
	CreatedAt      time.Time          `json:"created_at"`
	StartedAt      *time.Time         `json:"started_at"`
	CompletedAt    *time.Time         `json:"completed_at"`
	UpdatedAt      time.Time          `json:"updated_at"`
}

// Finished reports whether the experiment ended (completed, failed or cancelled).
func (x *Experiment) Finished() bool {
	return x.Status != "pending" && x.Status != "running"
}

// ExperimentCreate is the body of ExperimentCreate.
type ExperimentCreate struct {
	DatasetID    string         `json:"dataset_id"`
	AgentID      string         `json:"agent_id"`
	VersionID    string         `json:"version_id,omitempty"`
	EvaluatorIDs []string       `json:"evaluator_ids,omitempty"`
	Concurrency  int            `json:"concurrency,omitempty"`
	Name         string         `json:"name,omitempty"`
	Metadata     map[string]any `json:"metadata,omitempty"`
}

// ExperimentListOptions filters ExperimentList.
type ExperimentListOptions struct {
	ListOptions
	DatasetID, AgentID, Status string
}

// ExperimentResult is one item of an experiment and what became of it.
type ExperimentResult struct {
	ItemID         string          `json:"item_id"`
	Position       int             `json:"position"`
	ExecutionID    *string         `json:"execution_id"`
	Status         string          `json:"status"`
	Input          map[string]any  `json:"input"`
	Output         json.RawMessage `json:"output"`
	ExpectedOutput json.RawMessage `json:"expected_output"`
	Error          *string         `json:"error"`
	Scores         map[string]any  `json:"scores"`
	Cost           float64         `json:"cost"`
	TotalTokens    int             `json:"total_tokens"`
	DurationMS     *int64          `json:"duration_ms"`
}

// ExperimentComparison sets experiments side by side.
type ExperimentComparison struct {
	Experiments []Experiment `json:"experiments"`
	Scores      []struct {
		Name  string     `json:"name"`
		Means []*float64 `json:"means"`
		Diffs []*float64 `json:"diffs"`
	} `json:"scores"`
	Items []struct {
		ItemID string `json:"item_id"`
		Runs   []*struct {
			ExecutionID *string         `json:"execution_id"`
			Status      string          `json:"status"`
			Output      json.RawMessage `json:"output"`
			Scores      map[string]any  `json:"scores"`
		} `json:"runs"`
	} `json:"items"`
}

func experimentPath(id string) string { return "/api/v1/experiments/" + pathEscape(id) }

// ExperimentCreate starts an experiment (202: it runs in the background).
func (c *Client) ExperimentCreate(ctx context.Context, in ExperimentCreate, opts ...RequestOption) (*Experiment, error) {
	return send[Experiment](ctx, c, http.MethodPost, "/api/v1/experiments", in, opts...)
}

// ExperimentList lists experiments, newest first.
func (c *Client) ExperimentList(ctx context.Context, o ExperimentListOptions) (*List[Experiment], error) {
	q := o.values()
	setIf(q, "dataset_id", o.DatasetID)
	setIf(q, "agent_id", o.AgentID)
	setIf(q, "status", o.Status)
	return list[Experiment](ctx, c, "/api/v1/experiments", q)
}

// ExperimentGet gets an experiment with its progress and summary.
func (c *Client) ExperimentGet(ctx context.Context, id string) (*Experiment, error) {
	return get[Experiment](ctx, c, experimentPath(id), nil)
}

// ExperimentCancel cancels a pending or running experiment.
func (c *Client) ExperimentCancel(ctx context.Context, id string) (*Experiment, error) {
	return send[Experiment](ctx, c, http.MethodPost, experimentPath(id)+"/cancel", nil)
}

// ExperimentResults lists an experiment's items and their outcomes, in dataset order.
func (c *Client) ExperimentResults(ctx context.Context, id string, o ListOptions) (*List[ExperimentResult], error) {
	return list[ExperimentResult](ctx, c, experimentPath(id)+"/results", o.values())
}

// ExperimentCompare sets two to five experiments side by side, the first the baseline.
func (c *Client) ExperimentCompare(ctx context.Context, ids ...string) (*ExperimentComparison, error) {
	return get[ExperimentComparison](ctx, c, "/api/v1/experiments/compare", url.Values{"ids": {strings.Join(ids, ",")}})
}

// ExperimentStream streams an experiment's progress: item frames as items finish, then done
// or error. lastEventID -1 starts from now; 0 from the first item.
func (c *Client) ExperimentStream(ctx context.Context, id string, lastEventID int) (*Stream, error) {
	h := http.Header{}
	if lastEventID >= 0 {
		h.Set("Last-Event-ID", strconv.Itoa(lastEventID))
	}
	return c.openStream(ctx, http.MethodGet, experimentPath(id)+"/stream", nil, h)
}
