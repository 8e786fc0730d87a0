-- +goose Up
-- The model that answered an execution's last model call: its version's model, or the
-- fallback that answered when that one failed (config.fallback_models).
ALTER TABLE executions ADD COLUMN model TEXT;

-- model_health is what every node knows of model credentials and of providers' models
-- (internal/modelhealth): consecutive failures, the last hold-off (backoff_ms, doubled on
-- each failure) and until when the key is held off (until_ms, Unix ms by the database's
-- clock; 0: not held off). A key that answers again is deleted.
CREATE TABLE model_health (
    key         TEXT PRIMARY KEY,
    failures    BIGINT NOT NULL,
    backoff_ms  BIGINT NOT NULL,
    until_ms    BIGINT NOT NULL
);

-- +goose Down
DROP TABLE model_health;
ALTER TABLE executions DROP COLUMN model;
