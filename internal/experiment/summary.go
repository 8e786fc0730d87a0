package experiment

import (
	"encoding/json"
	"math"
	"sort"

	"github.com/agentplane/agentplane/internal/domain"
)

// Summarize sums up the finished items of an experiment: per score name the count and the
// mean (numbers) or the distribution (labels), the executions' cost and tokens, and the
// median and 95th percentile of their durations (nearest rank).
func Summarize(items []*domain.ExperimentItem) *domain.ExperimentSummary {
	sm := &domain.ExperimentSummary{Scores: []domain.ScoreStat{}}
	stats := map[string]*domain.ScoreStat{}
	sums := map[string]float64{}
	var durations []int64
	for _, it := range items {
		if it.Status != domain.ItemCompleted && it.Status != domain.ItemFailed {
			continue
		}
		sm.Cost += it.Cost
		sm.TotalTokens += it.TotalTokens
		if it.DurationMS != nil {
			durations = append(durations, *it.DurationMS)
		}
		for name, v := range it.Scores {
			st := stats[name]
			if st == nil {
				st = &domain.ScoreStat{Name: name}
				stats[name] = st
			}
			st.Count++
			switch v := v.(type) {
			case float64:
				sums[name] += v
			case string:
				if st.Distribution == nil {
					st.Distribution = map[string]int{}
				}
				st.Distribution[v]++
			}
		}
	}
	for name, st := range stats {
		if st.Distribution == nil {
			m := sums[name] / float64(st.Count)
			st.Mean = &m
		}
		sm.Scores = append(sm.Scores, *st)
	}
	sort.Slice(sm.Scores, func(i, j int) bool { return sm.Scores[i].Name < sm.Scores[j].Name })
	sm.LatencyP50, sm.LatencyP95 = percentile(durations, 0.50), percentile(durations, 0.95)
	return sm
}

// percentile is the nearest-rank percentile of ds; nil for none.
func percentile(ds []int64, p float64) *int64 {
	if len(ds) == 0 {
		return nil
	}
	sorted := append([]int64(nil), ds...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	rank := int(math.Ceil(p*float64(len(sorted)))) - 1
	v := sorted[max(rank, 0)]
	return &v
}

// Comparison sets experiments side by side: per item their outputs and scores, and per
// score name each one's mean and its difference to the first's.
type Comparison struct {
	Experiments []*domain.Experiment `json:"experiments" doc:"In the order asked for; the first is the baseline."`
	Scores      []ScoreComparison    `json:"scores" doc:"One entry per score name of any of them, sorted by name."`
	Items       []ItemComparison     `json:"items" doc:"One entry per item of any of them, in the first's dataset order."`
}

// ScoreComparison is one score name across the experiments compared.
type ScoreComparison struct {
	Name  string     `json:"name"`
	Means []*float64 `json:"means" doc:"Each experiment's mean, in order; null where it has none (or the scores are labels)."`
	Diffs []*float64 `json:"diffs" doc:"Each mean minus the first's; null where either is null."`
}

// ItemComparison is one item across the experiments compared.
type ItemComparison struct {
	ItemID string       `json:"item_id"`
	Runs   []*ItemBrief `json:"runs" doc:"Each experiment's run of the item, in order; null where it has none."`
}

// ItemBrief is what an experiment made of an item.
type ItemBrief struct {
	ExecutionID *string           `json:"execution_id"`
	Status      string            `json:"status"`
	Output      json.RawMessage   `json:"output"`
	Scores      domain.JSONObject `json:"scores"`
}

// Compare builds the comparison of experiments from their items (items[i] are xs[i]'s).
func Compare(xs []*domain.Experiment, items [][]*domain.ExperimentItem) *Comparison {
	c := &Comparison{Experiments: xs, Scores: []ScoreComparison{}, Items: []ItemComparison{}}
	index := map[string]int{}
	means := make([]map[string]*float64, len(xs))
	for i, its := range items {
		sm := Summarize(its)
		means[i] = map[string]*float64{}
		for _, st := range sm.Scores {
			means[i][st.Name] = st.Mean
		}
		for _, it := range its {
			k, ok := index[it.ItemID]
			if !ok {
				k = len(c.Items)
				index[it.ItemID] = k
				c.Items = append(c.Items, ItemComparison{ItemID: it.ItemID, Runs: make([]*ItemBrief, len(xs))})
			}
			c.Items[k].Runs[i] = &ItemBrief{ExecutionID: it.ExecutionID, Status: it.Status, Output: it.Output, Scores: it.Scores}
		}
	}
	names := map[string]bool{}
	for _, m := range means {
		for n := range m {
			names[n] = true
		}
	}
	for n := range names {
		sc := ScoreComparison{Name: n, Means: make([]*float64, len(xs)), Diffs: make([]*float64, len(xs))}
		for i := range xs {
			sc.Means[i] = means[i][n]
			if base := means[0][n]; base != nil && sc.Means[i] != nil {
				d := *sc.Means[i] - *base
				sc.Diffs[i] = &d
			}
		}
		c.Scores = append(c.Scores, sc)
	}
	sort.Slice(c.Scores, func(i, j int) bool { return c.Scores[i].Name < c.Scores[j].Name })
	return c
}
