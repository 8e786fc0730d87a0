package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/DataDog/sketches-go/ddsketch/mapping"
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

// maxBin is the bin of the longest duration there is (math.MaxInt64 ms): a bin read above it
// (or below zeroBin) is not one the triggers wrote.
var maxBin = rollupMapping.Index(math.MaxInt64)

// eachBin calls fn with each pair of a "bin:count,bin:count" list, the form of a packed row
// (migration 00038) and of the bin rows the summary aggregates; a pair of another shape, or a
// bin out of the mapping's range, is an error. It reads the digits itself, in one pass: with
// strconv (and bytes.Cut) a row of 230 bins, a busy period's, took 3 times the CPU (16 µs
// against 5), and cutting each number out first twice the CPU of this loop.
func eachBin(list []byte, fn func(bin int, count int64)) error {
	bad := func() error { return fmt.Errorf("rollup bins %q: not a list of bin:count", list) }
	var bin int64
	for i := 0; i < len(list); {
		// Two numbers, each an optional minus sign and 1 to 18 digits; the first ends in ':',
		// the second in ',' (not at the end of the list) or the end.
		var v [2]int64
		for k := range 2 {
			neg := list[i] == '-'
			if neg {
				i++
			}
			start := i
			for ; i < len(list) && list[i] >= '0' && list[i] <= '9'; i++ {
				v[k] = v[k]*10 + int64(list[i]-'0')
			}
			if d := i - start; d == 0 || d > 18 {
				return bad()
			}
			if neg {
				v[k] = -v[k]
			}
			switch {
			case k == 0 && (i == len(list) || list[i] != ':'):
				return bad()
			case k == 1 && i < len(list) && (list[i] != ',' || i == len(list)-1):
				return bad()
			}
			i++ // past the separator (or the end)
			if k == 0 && i == len(list) {
				return bad()
			}
		}
		if bin = v[0]; bin < zeroBin || bin > int64(maxBin) {
			return bad()
		}
		fn(int(bin), v[1])
	}
	return nil
}

// binSums adds up counts per bin, of either sign (a trace's update subtracts its old bin),
// over the bins seen so far: a sketch takes only the bins whose total is positive.
type binSums struct {
	lo int // the bin of n[0]
	n  []int64
}

func (s *binSums) add(bin int, count int64) {
	if len(s.n) == 0 {
		s.lo = bin
	}
	if bin < s.lo {
		s.n = append(make([]int64, s.lo-bin, s.lo-bin+len(s.n)), s.n...)
		s.lo = bin
	}
	if i := bin - s.lo; i >= len(s.n) {
		s.n = append(s.n, make([]int64, i+1-len(s.n))...)
	}
	s.n[bin-s.lo] += count
}

// each calls fn with every bin whose total is not 0, in ascending order.
func (s *binSums) each(fn func(bin int, count int64)) {
	for i, c := range s.n {
		if c != 0 {
			fn(s.lo+i, c)
		}
	}
}

// latency gives the p50, p95 and p99 of the bins whose total is positive, interpolated
// between the two nearest ranks as percentile_cont does (a rank's value is its bin's, within
// rollupAccuracy; runs of 10 and 20 ms have a p50 of 15). Adding the counts of a bin is how
// DDSketches merge; the ranks are read off the summed bins, where building a sketch of the
// library's from them and asking it for each rank cost 35 % of the summary's CPU
// (BenchmarkTraceSummary, dense-24h-by-hour). Nil percentiles without a positive bin.
func (s *binSums) latency() domain.Latency {
	n := s.positive()
	if n < 1 {
		return domain.Latency{}
	}
	// at is the value of the rank-th smallest duration (0-based).
	at := func(rank int64) float64 {
		var cum int64
		for i, c := range s.n {
			if c > 0 {
				if cum += c; cum > rank {
					return binValue(s.lo + i)
				}
			}
		}
		return binValue(s.lo + len(s.n) - 1)
	}
	pct := func(q float64) *float64 {
		r := q * float64(n-1)
		lo := math.Floor(r)
		v := at(int64(lo))
		if f := r - lo; f > 0 {
			v += f * (at(int64(lo)+1) - v)
		}
		return &v
	}
	return domain.Latency{P50: pct(0.5), P95: pct(0.95), P99: pct(0.99)}
}

// positive is the number of durations in the bins whose total is positive: those the
// percentiles are of.
func (s *binSums) positive() int64 {
	var n int64
	for _, c := range s.n {
		if c > 0 {
			n += c
		}
	}
	return n
}

// binValue is the duration a bin stands for (0 ms for zeroBin).
func binValue(bin int) float64 {
	if bin == zeroBin {
		return 0
	}
	return rollupMapping.Value(bin)
}

// TraceSummary summarises the workspace's traces started from the start of the bucket holding
// from up to to, per agent and bucket (bucket start = start time rounded down to a multiple of
// bucket since the Unix epoch; bucket is a whole number of hours), ordered by bucket then
// agent. It reads the rollups of migrations 00020 and 00038, never the traces: their rows of a
// day when bucket is a whole number of days, else of an hour. Buckets without runs are left out.
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
	args := []any{ws, period, first, to}

	// On SQLite the rows are read in the order of their primary key and summed here: a GROUP
	// BY would sort them (SQLite's sorter costs more than the scan). PostgreSQL groups them in
	// the order of the key, unsorted, and sends a row per agent and period, not one per shard
	// (8 in a busy hour): BenchmarkTraceSummary/postgres, 2 runs each, 30d-by-day 9.9–10.3 →
	// 6.7–7.6 ms, dense-24h-by-hour 1.3–1.6 → 0.7–0.9 ms.
	rollups := `SELECT agent_id, period_start, runs, errors, prompt_tokens, completion_tokens, cost
		FROM trace_rollups WHERE workspace_id = $1 AND period = $2 AND period_start >= $3 AND period_start < $4`
	if s.dialect == Postgres {
		rollups = `SELECT agent_id, period_start, sum(runs), sum(errors), sum(prompt_tokens), sum(completion_tokens), sum(cost)
		FROM trace_rollups WHERE workspace_id = $1 AND period = $2 AND period_start >= $3 AND period_start < $4 GROUP BY period_start, agent_id, model`
	}
	err := s.rollupRows(ctx, rollups, args,
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

	// Their latency. A bucket of one packed row (migration 00038) whose percentiles the
	// leader's pass wrote (migration 00041), and no bin row written since, takes them as they
	// are: with the default buckets (a period each) and one model per agent, that is every
	// bucket but those the last 30 s of runs touched. Parsing and summing the packed bins of
	// every bucket, the summary's cost grew with the runs of a period (BenchmarkHistory,
	// trace_summary_24h at 1 M runs: 2 to 3.4 times the 10 K figure on SQLite; 30 d on
	// PostgreSQL 2.76 times). The rows written since the pass are read by the bins' primary
	// key, one per agent and period start (latency_n -1).
	lats := map[key]*bucketLatency{}
	err = s.rollupRows(ctx, `SELECT agent_id, period_start, latency_n, p50_ms, p95_ms, p99_ms FROM trace_rollup_sketches
		WHERE workspace_id = $1 AND period = $2 AND period_start >= $3 AND period_start < $4
		UNION ALL
		SELECT agent_id, period_start, -1, NULL, NULL, NULL FROM trace_rollup_bins
		WHERE workspace_id = $1 AND period = $2 AND period_start >= $3 AND period_start < $4
		GROUP BY period_start, agent_id`, args,
		func(r *sql.Rows) error {
			var k key
			var n sql.NullInt64
			var lat domain.Latency
			if err := r.Scan(&k.agent, &k.bucket, &n, &lat.P50, &lat.P95, &lat.P99); err != nil {
				return err
			}
			k.bucket = k.bucket / bms * bms
			l := lats[k]
			if l == nil {
				l = &bucketLatency{}
				lats[k] = l
			}
			if n.Valid && n.Int64 < 0 {
				l.pending = true
			} else {
				l.rows++
				l.lat, l.summed = lat, n.Valid
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("trace summary latency: %w", err)
	}
	// The others sum the bins of their packed rows and of the bin rows written since the pass,
	// which the database packs into one "bin:count,…" list per agent and period the same way
	// (read in key order, no sort), over the period starts from the first such bucket's to
	// the last's. A bin's counts are summed before the percentiles are read: a bin row may
	// subtract from a packed count (a trace's update moves it to another bin).
	var lo, hi int64 = math.MaxInt64, math.MinInt64
	for k, l := range lats {
		if l.read() {
			continue
		}
		lo, hi = min(lo, k.bucket), max(hi, k.bucket+bms)
	}
	sums := map[key]*binSums{}
	if lo < hi {
		var (
			agent sql.RawBytes
			start int64
			list  sql.RawBytes
		)
		err = s.rollupRows(ctx, `SELECT agent_id, period_start, bins FROM trace_rollup_sketches
			WHERE workspace_id = $1 AND period = $2 AND period_start >= $3 AND period_start < $4
			UNION ALL
			SELECT agent_id, period_start, string_agg(bin || ':' || count, ',') FROM trace_rollup_bins
			WHERE workspace_id = $1 AND period = $2 AND period_start >= $3 AND period_start < $4
			GROUP BY period_start, agent_id`, []any{ws, period, max(lo, first), min(hi, to.UnixMilli())},
			func(r *sql.Rows) error {
				if err := r.Scan(&agent, &start, &list); err != nil {
					return err
				}
				k := key{string(agent), start / bms * bms}
				if lats[k].read() {
					return nil // a bucket between two that are summed here: its percentiles were read
				}
				bs := sums[k]
				if bs == nil {
					bs = &binSums{}
					sums[k] = bs
				}
				return eachBin(list, bs.add)
			})
		if err != nil {
			return nil, fmt.Errorf("trace summary latency: %w", err)
		}
	}

	out := make([]*domain.TraceBucket, 0, len(groups))
	for k, tb := range groups {
		if tb.Runs <= 0 { // its traces moved to another period (an ingested trace's start)
			continue
		}
		if k.agent != "" {
			tb.AgentID = &k.agent
		}
		if bs := sums[k]; bs != nil {
			tb.LatencyMS = bs.latency()
		} else if l := lats[k]; l.read() {
			tb.LatencyMS = l.lat
		}
		out = append(out, traceBucketFinish(tb, k.bucket))
	}
	slices.SortFunc(out, func(a, b *domain.TraceBucket) int {
		if c := a.BucketStart.Compare(b.BucketStart.Time); c != 0 {
			return c
		}
		return strings.Compare(domain.Deref(a.AgentID), domain.Deref(b.AgentID)) // no agent ('') first
	})
	return out, nil
}

// bucketLatency is what the trace summary knows of a bucket's latency before it reads bins.
type bucketLatency struct {
	rows    int  // packed rows
	pending bool // bin rows written since the leader's last pass
	lat     domain.Latency
	summed  bool // the one packed row's percentiles were written (latency_n not NULL)
}

// read: the bucket's percentiles are those its one packed row keeps, read as they are (false
// for a bucket the first query did not see).
func (l *bucketLatency) read() bool { return l != nil && l.rows == 1 && !l.pending && l.summed }

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
