package store

import (
	"database/sql/driver"
	"encoding/json"
	"math"
	"slices"
	"strings"

	"modernc.org/sqlite"
)

// SQLite has no percentile_cont, and its sorter (a temporary B-tree for GROUP BY and the
// window functions' ORDER BY) costs over a second for 100,000 runs under modernc. The summary
// is instead one aggregate over the rows of the covering index traces_summary, read in start
// order without any sort: agentplane_trace_summary groups them by agent and bucket in a map
// and returns the groups as JSON, each with its exact percentiles (as percentile_cont:
// linear interpolation between the two nearest ranks).
func init() {
	sqlite.MustRegisterFunction("agentplane_trace_summary", &sqlite.FunctionImpl{
		NArgs: 8, Deterministic: true, VolatileArgs: true,
		MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) {
			return &summaryAgg{groups: map[summaryKey]*summaryGroup{}}, nil
		},
	})
}

type summaryKey struct {
	agent   string
	noAgent bool
	bucket  int64
}

type summaryGroup struct {
	agent     *string
	bucket    int64
	runs      int64
	errors    int64
	prompt    int64
	complete  int64
	cost      float64
	durations []int64
}

// summaryAgg is one evaluation of agentplane_trace_summary(agent_id, started_at, status,
// duration_ms, prompt_tokens, completion_tokens, cost, bucket_ms).
type summaryAgg struct {
	groups map[summaryKey]*summaryGroup
}

// summaryRow is one group in the function's JSON result.
type summaryRow struct {
	Agent    *string  `json:"a"`
	Bucket   int64    `json:"b"`
	Runs     int64    `json:"r"`
	Errors   int64    `json:"e"`
	Prompt   int64    `json:"p"`
	Complete int64    `json:"c"`
	Cost     float64  `json:"k"`
	P50      *float64 `json:"p50"`
	P95      *float64 `json:"p95"`
	P99      *float64 `json:"p99"`
}

func argInt(v driver.Value) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case float64:
		return int64(x), true
	}
	return 0, false
}

func argFloat(v driver.Value) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	}
	return 0
}

func (a *summaryAgg) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	bucketMS, _ := argInt(args[7])
	started, _ := argInt(args[1])
	if bucketMS <= 0 {
		bucketMS = 1
	}
	k := summaryKey{bucket: started / bucketMS * bucketMS}
	switch v := args[0].(type) {
	case string:
		k.agent = v // a view into SQLite's memory: copied below before it is kept
	case []byte:
		k.agent = string(v)
	default:
		k.noAgent = true
	}
	g := a.groups[k]
	if g == nil {
		k.agent = strings.Clone(k.agent)
		g = &summaryGroup{bucket: k.bucket}
		if !k.noAgent {
			g.agent = &k.agent
		}
		a.groups[k] = g
	}
	g.runs++
	if st, ok := args[2].(string); ok && st == StatusFailed {
		g.errors++
	}
	if d, ok := argInt(args[3]); ok {
		g.durations = append(g.durations, d)
	}
	p, _ := argInt(args[4])
	c, _ := argInt(args[5])
	g.prompt += p
	g.complete += c
	g.cost += argFloat(args[6])
	return nil
}

func (a *summaryAgg) WindowInverse(*sqlite.FunctionContext, []driver.Value) error {
	return errWindowUnsupported
}

var errWindowUnsupported = driverError("agentplane_trace_summary cannot be used as a window function")

type driverError string

func (e driverError) Error() string { return string(e) }

func (a *summaryAgg) WindowValue(*sqlite.FunctionContext) (driver.Value, error) {
	rows := make([]summaryRow, 0, len(a.groups))
	for _, g := range a.groups {
		slices.Sort(g.durations)
		rows = append(rows, summaryRow{Agent: g.agent, Bucket: g.bucket, Runs: g.runs, Errors: g.errors, Prompt: g.prompt,
			Complete: g.complete, Cost: g.cost, P50: percentileCont(g.durations, 0.50), P95: percentileCont(g.durations, 0.95),
			P99: percentileCont(g.durations, 0.99)})
	}
	slices.SortFunc(rows, func(x, y summaryRow) int {
		if x.Bucket != y.Bucket {
			if x.Bucket < y.Bucket {
				return -1
			}
			return 1
		}
		switch {
		case x.Agent == nil && y.Agent == nil:
			return 0
		case x.Agent == nil:
			return -1
		case y.Agent == nil:
			return 1
		}
		return strings.Compare(*x.Agent, *y.Agent)
	})
	b, err := json.Marshal(rows)
	return string(b), err
}

func (a *summaryAgg) Final(*sqlite.FunctionContext) {}

// percentileCont is PostgreSQL's percentile_cont(p) of sorted values (nil for none).
func percentileCont(sorted []int64, p float64) *float64 {
	if len(sorted) == 0 {
		return nil
	}
	pos := p * float64(len(sorted)-1)
	lo := math.Floor(pos)
	v := float64(sorted[int(lo)])
	if frac := pos - lo; frac > 0 {
		v += (float64(sorted[int(lo)+1]) - v) * frac
	}
	return &v
}
