-- +goose Up
-- Percentiles kept with each packed row (issue 18): the trace summary parsed and summed every
-- packed row of its window, and a busy period's row holds hundreds of bins, so its cost grew
-- with the runs of each period (BenchmarkHistory at 1 M runs: 2 to 3.4 times the 10 K figure).
-- The leader's pass (store.TraceRollupPack) now writes the p50, p95 and p99 of a row's bins as it
-- packs them, and latency_n, the number of durations they are of (NULL: not computed yet, as for
-- the rows this migration copies; the next pass fills them in, listing them by the partial index).
-- A summary bucket of one packed row and no bin row written since the pass reads them as they
-- are. On SQLite they come before bins, so that reading them never follows a long list's overflow
-- pages: the table is made anew.
CREATE TABLE trace_rollup_sketches_next (
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    period        INTEGER NOT NULL,
    period_start  INTEGER NOT NULL,
    agent_id      TEXT NOT NULL,
    model         TEXT NOT NULL,
    latency_n     INTEGER,
    p50_ms        REAL,
    p95_ms        REAL,
    p99_ms        REAL,
    bins          TEXT NOT NULL,
    PRIMARY KEY (workspace_id, period, period_start, agent_id, model)
) WITHOUT ROWID;
INSERT INTO trace_rollup_sketches_next (workspace_id, period, period_start, agent_id, model, bins)
SELECT workspace_id, period, period_start, agent_id, model, bins FROM trace_rollup_sketches;
DROP TABLE trace_rollup_sketches;
ALTER TABLE trace_rollup_sketches_next RENAME TO trace_rollup_sketches;
CREATE INDEX trace_rollup_sketches_unsummed ON trace_rollup_sketches (workspace_id, period, period_start, agent_id, model)
    WHERE latency_n IS NULL;

-- +goose Down
DROP INDEX trace_rollup_sketches_unsummed;
ALTER TABLE trace_rollup_sketches DROP COLUMN p99_ms;
ALTER TABLE trace_rollup_sketches DROP COLUMN p95_ms;
ALTER TABLE trace_rollup_sketches DROP COLUMN p50_ms;
ALTER TABLE trace_rollup_sketches DROP COLUMN latency_n;
