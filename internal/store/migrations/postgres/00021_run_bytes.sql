-- +goose Up
-- Bytes per run (issue 18). A batch of frames may be stored compressed (zstd, see
-- internal/store/frames.go): then packed holds the compressed JSON array and frames is ''.
-- Rows written before keep their text in frames and packed NULL; both kinds are read alike.
ALTER TABLE execution_events ADD COLUMN packed BYTEA;
-- Compressed already: PostgreSQL need not try its own compression on a long one.
ALTER TABLE execution_events ALTER COLUMN packed SET STORAGE EXTERNAL;

-- A span's input or output that is its execution's (the root span's input, the answer of the
-- model call that became the output) is stored once, on the execution: the span's column is
-- NULL and shared says which (bits: 1 input, 2 output; see store.SpansShareExecution).
ALTER TABLE spans ADD COLUMN shared SMALLINT NOT NULL DEFAULT 0;

-- +goose Down
-- Shared values are copied back into the spans. SQL cannot decompress: going down drops the
-- compressed batches of frames (their runs' streams replay without those frames).
UPDATE spans SET input = (SELECT e.input FROM traces t JOIN executions e ON e.id = t.execution_id
    WHERE t.workspace_id = spans.workspace_id AND t.id = spans.trace_id) WHERE shared IN (1, 3);
UPDATE spans SET output = (SELECT CASE WHEN e.output = '{}' THEN '{"tool_calls":null}'
        ELSE substr(e.output, 1, length(e.output) - 1) || ',"tool_calls":null}' END
    FROM traces t JOIN executions e ON e.id = t.execution_id
    WHERE t.workspace_id = spans.workspace_id AND t.id = spans.trace_id) WHERE shared IN (2, 3);
ALTER TABLE spans DROP COLUMN shared;
DELETE FROM execution_events WHERE packed IS NOT NULL;
ALTER TABLE execution_events DROP COLUMN packed;
