-- +goose Up
-- Packed latency sketches (issue 18): the trace summary read every bin row of trace_rollup_bins
-- in its window, and a busy period has hundreds (one per distinct duration bin), so its reads
-- grew with the runs. A row here holds the bins of one workspace, period, period start, agent
-- and model (the key of migration 00020's rollups) as one "bin:count,bin:count,…" list, bins in
-- ascending order, counts never 0. The elected leader's pass (store.TraceRollupPack) moves the
-- bin rows the triggers write into it, a group per short transaction: it deletes the group's
-- bin rows and adds their counts to the list. The summary reads these rows and the bin rows
-- written since the last pass, summing the counts of a bin. The triggers are unchanged: a run
-- still writes the bin rows only.
CREATE TABLE trace_rollup_sketches (
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    period        INTEGER NOT NULL,
    period_start  INTEGER NOT NULL,
    agent_id      TEXT NOT NULL,
    model         TEXT NOT NULL,
    bins          TEXT NOT NULL,
    PRIMARY KEY (workspace_id, period, period_start, agent_id, model)
) WITHOUT ROWID;

-- +goose Down
-- The packed counts go back into bin rows, added to those written since the last pass: the list
-- "b:c,b:c" read as the JSON array [[b,c],[b,c]].
INSERT INTO trace_rollup_bins (workspace_id, period, period_start, agent_id, model, bin, count)
SELECT k.workspace_id, k.period, k.period_start, k.agent_id, k.model, p.value ->> 0, sum(p.value ->> 1)
FROM trace_rollup_sketches k, json_each('[[' || replace(replace(k.bins, ',', '],['), ':', ',') || ']]') p
WHERE k.bins <> ''
GROUP BY 1, 2, 3, 4, 5, 6
ON CONFLICT (workspace_id, period, period_start, agent_id, model, bin) DO UPDATE SET count = count + excluded.count;
DROP TABLE trace_rollup_sketches;
