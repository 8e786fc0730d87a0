-- +goose Up
-- GET /traces?service_name= (Studio's Traces page) reads the service's traces off an index in
-- the list's order, as the other filters do (00012, 00018). Ingested traces only carry a
-- service, so the index holds only theirs.
CREATE INDEX traces_service ON traces (workspace_id, service_name, created_at DESC, id DESC) WHERE service_name IS NOT NULL;

-- +goose Down
DROP INDEX traces_service;
