-- +goose Up
-- Percentiles kept with each packed row (issue 18): the trace summary parsed and summed every
-- packed row of its window, and a busy period's row holds hundreds of bins, so its cost grew
-- with the runs of each period (BenchmarkHistory at 1 M runs: the 30 d summary 2.76 times the
-- 10 K figure). The leader's pass (store.TraceRollupPack) now writes the p50, p95 and p99 of a
-- row's bins as it packs them, and latency_n, the number of durations they are of (NULL: not
-- computed yet, as for the rows already here; the next pass fills them in, listing them by the
-- partial index). A summary bucket of one packed row and no bin row written since the pass reads
-- them as they are. Columns without a default: adding them rewrites nothing.
ALTER TABLE trace_rollup_sketches
    ADD COLUMN latency_n BIGINT,
    ADD COLUMN p50_ms DOUBLE PRECISION,
    ADD COLUMN p95_ms DOUBLE PRECISION,
    ADD COLUMN p99_ms DOUBLE PRECISION;
CREATE INDEX trace_rollup_sketches_unsummed ON trace_rollup_sketches (workspace_id, period, period_start, agent_id, model)
    WHERE latency_n IS NULL;

-- +goose Down
DROP INDEX trace_rollup_sketches_unsummed;
ALTER TABLE trace_rollup_sketches DROP COLUMN latency_n, DROP COLUMN p50_ms, DROP COLUMN p95_ms, DROP COLUMN p99_ms;
