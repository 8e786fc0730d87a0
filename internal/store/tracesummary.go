package store

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/DataDog/sketches-go/ddsketch/mapping"
	ddstore "github.com/DataDog/sketches-go/ddsketch/store"
	"github.com/agentplane/agentplane/internal/domain"
)

// rollupAccuracy is the relative accuracy of the latency sketch the trace rollups keep: a
// percentile of the summary is within 0.5 % of the exact one (percentile_cont's, over the
// same durations). The bin formula of migration 00020 (floor(ln(ms) * 1/ln(γ)), γ = (1+a)/(1-a))
// is written for this value; changing it needs a migration that rebuilds trace_rollup_bins.
const rollupAccuracy = 0.005

// zeroBin is the bin of a 0 ms duration in trace_rollup_bins (the sketch's zero bucket: a
// logarithm has no bin for 0; every duration of 1 ms or more has a bin >= 0).
const zeroBin = -1

// rollupMapping maps bins to durations, as the migration maps durations to bins.
var rollupMapping = func() *mapping.LogarithmicMapping {
	m, err := mapping.NewLogarithmicMapping(rollupAccuracy)
	if err != nil {
		panic(err)
	}
	return m
}()

// newLatencySketch returns an empty DDSketch on the rollups' mapping.
func newLatencySketch() *ddsketch.DDSketch {
	return ddsketch.NewDDSketch(rollupMapping, ddstore.NewDenseStore(), ddstore.NewDenseStore())
}

// addBin adds n durations of one rollup bin to a sketch: the bin is the sketch's own index
// (the migration computes it with the sketch's mapping), 0 ms goes to its zero bucket.
func addBin(sk *ddsketch.DDSketch, bin int, n int64) {
	if bin == zeroBin {
		_ = sk.AddWithCount(0, float64(n)) // never fails for 0 and a positive count
		return
	}
	sk.GetPositiveValueStore().AddWithCount(bin, float64(n))
}

// addBins adds the "bin:count" pairs of packed (comma-separated) to a sketch.
func addBins(sk *ddsketch.DDSketch, packed []byte) error {
	for len(packed) > 0 {
		pair, rest, _ := bytes.Cut(packed, []byte{','})
		b, n, ok := bytes.Cut(pair, []byte{':'})
		bin, err1 := strconv.Atoi(string(b))
		count, err2 := strconv.ParseInt(string(n), 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return fmt.Errorf("rollup bins %q: not bin:count", pair)
		}
		addBin(sk, bin, count)
		packed = rest
	}
	return nil
}

// sketchLatency gives a sketch's p50, p95 and p99 interpolated between the two nearest ranks
// as percentile_cont does (the sketch's own quantile takes the lower rank, which for a few
// runs is far from percentile_cont: runs of 10 and 20 ms have a p50 of 15, not 10); each
// rank's value is the sketch's, within rollupAccuracy. Nil percentiles for an empty sketch.
func sketchLatency(sk *ddsketch.DDSketch) domain.Latency {
	n := sk.GetCount()
	if n < 1 {
		return domain.Latency{}
	}
	zero, pos := sk.GetZeroCount(), sk.GetPositiveValueStore()
	at := func(rank float64) float64 {
		if rank < zero {
			return 0
		}
		return rollupMapping.Value(pos.KeyAtRank(rank - zero))
	}
	pct := func(q float64) *float64 {
		r := q * (n - 1)
		lo := math.Floor(r)
		v := at(lo)
		if f := r - lo; f > 0 {
			v += f * (at(lo+1) - v)
		}
		return &v
	}
	return domain.Latency{P50: pct(0.5), P95: pct(0.95), P99: pct(0.99)}
}

// TraceSummary summarises the workspace's traces started from the start of the bucket holding
// from up to to, per agent and bucket (bucket start = start time rounded down to a multiple of
// bucket since the Unix epoch; bucket is a whole number of hours), ordered by bucket then
// agent. It reads the rollups of migration 00020, never the traces: their rows of a day when
// bucket is a whole number of days, else of an hour. Buckets without runs are left out.
func (s *Store) TraceSummary(ctx context.Context, ws string, from, to domain.Time, bucket time.Duration) ([]*domain.TraceBucket, error) {
	bms := bucket.Milliseconds()
	period := time.Hour.Milliseconds()
	if bms <= 0 || bms%period != 0 {
		return nil, fmt.Errorf("trace summary: bucket %v is not a whole number of hours", bucket)
	}
	if day := 24 * period; bms%day == 0 {
		period = day
	}
	first := from.UnixMilli() / bms * bms
	type key struct {
		agent  string
		bucket int64
	}
	groups := map[key]*domain.TraceBucket{}
	sketches := map[key]*ddsketch.DDSketch{}
	args := []any{ws, period, first, to}

	// The rows are read in the order of their primary key and summed here: a GROUP BY would
	// sort them (SQLite's sorter costs more than the scan).
	err := s.rollupRows(ctx, `SELECT agent_id, period_start, runs, errors, prompt_tokens, completion_tokens, cost
		FROM trace_rollups WHERE workspace_id = $1 AND period = $2 AND period_start >= $3 AND period_start < $4`, args,
		func(r *sql.Rows) error {
			var k key
			var runs, errors, pt, ct int64
			var cost float64
			if err := r.Scan(&k.agent, &k.bucket, &runs, &errors, &pt, &ct, &cost); err != nil {
				return err
			}
			k.bucket = k.bucket / bms * bms
			tb := groups[k]
			if tb == nil {
				tb = &domain.TraceBucket{}
				groups[k] = tb
			}
			tb.Runs += runs
			tb.Errors += errors
			tb.TokenUsage.PromptTokens += int(pt)
			tb.TokenUsage.CompletionTokens += int(ct)
			tb.Cost += cost
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("trace summary: %w", err)
	}

	// Their latency: the bins of each agent and period make one sketch, added up per bucket.
	// The database packs a period's bins of one agent into one "bin:count,…" string, read in
	// key order (no sort): the bins of a busy period number in the hundreds, and one row per
	// bin cost the summary more in row handling than the whole merge (BenchmarkHistory,
	// trace_summary_30d: the bins read grow with the runs until every bin of the durations'
	// spread is used).
	var (
		agent sql.RawBytes
		start int64
		bins  sql.RawBytes
	)
	err = s.rollupRows(ctx, `SELECT agent_id, period_start, string_agg(bin || ':' || count, ',')
		FROM trace_rollup_bins WHERE workspace_id = $1 AND period = $2 AND period_start >= $3 AND period_start < $4 AND count > 0
		GROUP BY period_start, agent_id`, args,
		func(r *sql.Rows) error {
			if err := r.Scan(&agent, &start, &bins); err != nil {
				return err
			}
			k := key{string(agent), start / bms * bms}
			sk := sketches[k]
			if sk == nil {
				sk = newLatencySketch()
				sketches[k] = sk
			}
			return addBins(sk, bins)
		})
	if err != nil {
		return nil, fmt.Errorf("trace summary latency: %w", err)
	}

	out := make([]*domain.TraceBucket, 0, len(groups))
	for k, tb := range groups {
		if tb.Runs <= 0 { // its traces moved to another period (an ingested trace's start)
			continue
		}
		if k.agent != "" {
			tb.AgentID = &k.agent
		}
		if sk := sketches[k]; sk != nil {
			tb.LatencyMS = sketchLatency(sk)
		}
		out = append(out, traceBucketFinish(tb, k.bucket))
	}
	slices.SortFunc(out, func(a, b *domain.TraceBucket) int {
		if c := a.BucketStart.Compare(b.BucketStart.Time); c != 0 {
			return c
		}
		return strings.Compare(deref(a.AgentID), deref(b.AgentID)) // no agent ('') first
	})
	return out, nil
}

// rollupRows runs a query of the rollups and calls fn for each row.
func (s *Store) rollupRows(ctx context.Context, q string, args []any, fn func(*sql.Rows) error) error {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

func traceBucketFinish(tb *domain.TraceBucket, bucketMS int64) *domain.TraceBucket {
	tb.BucketStart = domain.TimeFromMillis(bucketMS)
	tb.TokenUsage.TotalTokens = tb.TokenUsage.PromptTokens + tb.TokenUsage.CompletionTokens
	if tb.Runs > 0 {
		tb.ErrorRate = float64(tb.Errors) / float64(tb.Runs)
	}
	return tb
}
