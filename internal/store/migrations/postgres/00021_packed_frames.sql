-- +goose Up
-- A batch of frames may be stored compressed (zstd, see internal/store/frames.go): then packed
-- holds the compressed JSON array and frames is ''. Rows written before keep their text in
-- frames and packed NULL; both kinds are read alike.
ALTER TABLE execution_events ADD COLUMN packed BYTEA;
-- Compressed already: PostgreSQL need not try its own compression on a long one.
ALTER TABLE execution_events ALTER COLUMN packed SET STORAGE EXTERNAL;

-- +goose Down
-- SQL cannot decompress: going down drops the compressed batches (their runs' streams replay
-- without those frames).
DELETE FROM execution_events WHERE packed IS NOT NULL;
ALTER TABLE execution_events DROP COLUMN packed;
