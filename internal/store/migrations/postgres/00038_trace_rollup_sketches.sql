-- +goose Up
-- Packed latency sketches (issue 18): the trace summary read every bin row of trace_rollup_bins
-- in its window, and a busy period has hundreds (one per distinct duration bin), so its reads
-- grew with the runs. A row here holds the bins of one workspace, period, period start, agent
-- and model (the key of migration 00020's rollups) as one "bin:count,bin:count,…" list, bins in
-- ascending order, counts never 0. The elected leader's pass (store.TraceRollupPack) moves the
-- bin rows the triggers write into it, a group per short transaction: it deletes the group's
-- bin rows (skipping those a run's transaction holds) and adds their counts to the list. The
-- summary reads these rows and the bin rows written since the last pass, summing the counts of
-- a bin. The triggers are unchanged: a run still writes the bin rows only.
CREATE TABLE trace_rollup_sketches (
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    period        BIGINT NOT NULL,
    period_start  BIGINT NOT NULL,
    agent_id      TEXT NOT NULL,
    model         TEXT NOT NULL,
    bins          TEXT NOT NULL,
    PRIMARY KEY (workspace_id, period, period_start, agent_id, model)
);

-- +goose Down
-- The packed counts go back into bin rows, added to those written since the last pass.
INSERT INTO trace_rollup_bins AS b (workspace_id, period, period_start, agent_id, model, bin, count)
SELECT k.workspace_id, k.period, k.period_start, k.agent_id, k.model, split_part(p, ':', 1)::integer, sum(split_part(p, ':', 2)::bigint)
FROM trace_rollup_sketches k CROSS JOIN LATERAL string_to_table(k.bins, ',') p
WHERE k.bins <> ''
GROUP BY 1, 2, 3, 4, 5, 6
ON CONFLICT (workspace_id, period, period_start, agent_id, model, bin) DO UPDATE SET count = b.count + excluded.count;
DROP TABLE trace_rollup_sketches;
