package client

import (
	"context"
	"net/http"
	"strconv"
	"strings"
)

// Score returns the stat of a score name, or nil.
func (s *ExperimentSummary) Score(name string) *ScoreStat {
	for i := range s.Scores {
		if s.Scores[i].Name == name {
			return &s.Scores[i]
		}
	}
	return nil
}

// Finished reports whether the experiment ended (completed, failed or cancelled).
func (x *Experiment) Finished() bool {
	return x.Status != "pending" && x.Status != "running"
}

func experimentPath(id string) string { return "/api/v1/experiments/" + pathEscape(id) }

// ExperimentCreate starts an experiment: the agent's version runs on every item of the dataset.
func (c *Client) ExperimentCreate(ctx context.Context, in ExperimentCreateRequest, opts ...RequestOption) (*Experiment, error) {
	return send[Experiment](ctx, c, http.MethodPost, "/api/v1/experiments", in, opts...)
}

// ExperimentList lists experiments, newest first.
func (c *Client) ExperimentList(ctx context.Context, o ListExperimentsParams) (*List[Experiment], error) {
	return list[Experiment](ctx, c, "/api/v1/experiments", query(o))
}

// ExperimentGet gets an experiment with its progress and summary.
func (c *Client) ExperimentGet(ctx context.Context, id string) (*Experiment, error) {
	return get[Experiment](ctx, c, experimentPath(id), nil)
}

// ExperimentCancel cancels an experiment: items not started never run.
func (c *Client) ExperimentCancel(ctx context.Context, id string) (*Experiment, error) {
	return send[Experiment](ctx, c, http.MethodPost, experimentPath(id)+"/cancel", nil)
}

// ExperimentResults lists an experiment's results, one row per item.
func (c *Client) ExperimentResults(ctx context.Context, id string, o ListExperimentResultsParams) (*List[ExperimentItem], error) {
	return list[ExperimentItem](ctx, c, experimentPath(id)+"/results", query(o))
}

// ExperimentCompare sets two to five experiments side by side, the first the baseline.
func (c *Client) ExperimentCompare(ctx context.Context, ids ...string) (*Comparison, error) {
	return get[Comparison](ctx, c, "/api/v1/experiments/compare", query(CompareExperimentsParams{Ids: strings.Join(ids, ",")}))
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
