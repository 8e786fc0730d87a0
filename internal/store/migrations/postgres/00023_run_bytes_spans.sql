-- +goose Up
-- Bytes per run (issue 18), continued. A prompt span that renders no template has for input
-- the execution's input wrapped as {"input":…,"prompt_id":""}: stored once, on the execution
-- (spans.shared bit 4). A model call's attributes "model" and "provider" are its model and
-- provider columns: stored once, in those columns (bit 8). See store.SpanShared.
-- A top execution's root_id (its own id) is stored empty; only a child's names its root.
-- An execution's trace is found from the execution (its trace_id, by its key): nothing reads
-- traces by execution_id through an index any more.
DROP INDEX traces_execution;

-- +goose Down
UPDATE executions SET root_id = id WHERE root_id = '';
CREATE INDEX traces_execution ON traces (execution_id);
UPDATE spans SET input = (SELECT '{"input":' || e.input || ',"prompt_id":""}' FROM traces t JOIN executions e ON e.id = t.execution_id
    WHERE t.workspace_id = spans.workspace_id AND t.id = spans.trace_id), shared = shared & ~4 WHERE shared & 4 <> 0;
UPDATE spans SET attributes = (attributes::jsonb || jsonb_build_object('model', model, 'provider', provider))::text, shared = shared & ~8
    WHERE shared & 8 <> 0;
