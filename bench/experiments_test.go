package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentplane/agentplane/client"
)

// BenchmarkExperiment measures an experiment of 1,000 items at concurrency 16 on `serve`
// (SQLite) whose agent is answered by a zero-latency OpenAI fake, against the same 1,000
// executions submitted directly by 16 callers (sync execute) in the same run (goal: the
// experiment's wall time is at most 1/0.8 of theirs: experiment_ratio >= 0.8). The experiment
// is measured without evaluators and with one deterministic evaluator (scored_ratio).
func BenchmarkExperiment(b *testing.B) {
	const items, conc = 1000, 16
	ctx := context.Background()
	_, url, agent := openAIServe(b)
	c := client.New(url)
	d, err := c.DatasetCreate(ctx, client.DatasetCreateRequest{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	var add []client.DatasetItemRequest
	inputs := make([]map[string]any, items)
	for i := range items {
		inputs[i] = map[string]any{"message": fmt.Sprintf("How long does shipping to Canada take? (%d)", i)}
		add = append(add, client.DatasetItemRequest{Input: inputs[i], ExpectedOutput: json.RawMessage(`"Shipping to Canada takes five to seven days."`)})
	}
	if _, err := c.DatasetItemsAdd(ctx, d.ID, add); err != nil {
		b.Fatal(err)
	}
	ev, err := c.EvaluatorCreate(ctx, client.EvaluatorCreateRequest{Name: "exact", Type: "exact_match"})
	if err != nil {
		b.Fatal(err)
	}

	direct := func() time.Duration {
		start := time.Now()
		var next atomic.Int64
		var failed atomic.Value
		var wg sync.WaitGroup
		for range conc {
			wg.Go(func() {
				for i := next.Add(1) - 1; i < items; i = next.Add(1) - 1 {
					x, err := c.Execute(ctx, agent, client.ExecuteRequest{Input: inputs[i]})
					if err != nil || x.Status != "completed" {
						failed.Store(fmt.Sprintf("run %d: %v", i, err))
						return
					}
				}
			})
		}
		wg.Wait()
		if f := failed.Load(); f != nil {
			b.Fatal(f)
		}
		return time.Since(start)
	}
	experiment := func(evaluators []string) time.Duration {
		start := time.Now()
		x, err := c.ExperimentCreate(ctx, client.ExperimentCreateRequest{DatasetID: d.ID, AgentID: agent, EvaluatorIds: evaluators, Concurrency: client.Ptr(int64(conc))})
		if err != nil {
			b.Fatal(err)
		}
		// The list is polled, not the experiment: its GET sums up every item each time.
		for !x.Finished() {
			time.Sleep(5 * time.Millisecond)
			l, err := c.ExperimentList(ctx, client.ListExperimentsParams{DatasetID: d.ID, Limit: 1})
			if err != nil {
				b.Fatal(err)
			}
			x = &l.Data[0]
		}
		took := time.Since(start)
		if x.Status != "completed" || x.Progress.Completed != items {
			b.Fatalf("experiment: %s %+v", x.Status, x.Progress)
		}
		return took
	}

	b.ResetTimer()
	var directT, expT, scoredT time.Duration
	for range b.N {
		directT = direct()
		expT = experiment(nil)
		scoredT = experiment([]string{ev.ID})
	}
	b.ReportMetric(float64(directT.Milliseconds()), "direct_ms")
	b.ReportMetric(float64(expT.Milliseconds()), "experiment_ms")
	b.ReportMetric(float64(scoredT.Milliseconds()), "scored_ms")
	b.ReportMetric(directT.Seconds()/expT.Seconds(), "experiment_ratio")
	b.ReportMetric(directT.Seconds()/scoredT.Seconds(), "scored_ratio")
}
