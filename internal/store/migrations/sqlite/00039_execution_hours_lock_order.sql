-- +goose Up
-- Nothing to change on SQLite: migration 00039 makes PostgreSQL's statement-level trigger of
-- execution_hours lock its rows in key order, so that concurrent deletes of runs cannot
-- deadlock. SQLite runs one writer at a time and its triggers are per row. The migration
-- exists on both dialects so their versions stay the same.

-- +goose Down
