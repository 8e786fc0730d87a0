-- +goose Up
-- Online evaluation: a rule scores finished executions (of one agent, or of all) with an
-- evaluator. sampling is the share of matching executions judged, decided by a hash of the
-- rule and execution ids, so every node and every retry agree. filter is a JSON object
-- (status, source, metadata). A rule goes with its evaluator and its agent.
CREATE TABLE evaluation_rules (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    evaluator_id  TEXT NOT NULL REFERENCES evaluators(id) ON DELETE CASCADE,
    agent_id      TEXT REFERENCES agents(id) ON DELETE CASCADE,
    sampling      DOUBLE PRECISION NOT NULL,
    filter        TEXT NOT NULL DEFAULT '{}',
    enabled       BOOLEAN NOT NULL DEFAULT TRUE,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);
CREATE INDEX evaluation_rules_ws_created ON evaluation_rules (workspace_id, created_at DESC, id DESC);
CREATE INDEX evaluation_rules_evaluator ON evaluation_rules (evaluator_id);
CREATE INDEX evaluation_rules_agent ON evaluation_rules (agent_id);

-- The judgments to make: one row per (rule, execution), written in the transaction that ends
-- the execution, so a crash loses none. Every node's judge claims pending rows under a lease
-- (lease_owner until lease_expires_at, Unix ms on the database's clock); the score is written
-- in the transaction that marks the row done, guarded by the lease, so none is made twice.
CREATE TABLE evaluation_judgments (
    id                TEXT PRIMARY KEY,
    workspace_id      TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    rule_id           TEXT NOT NULL REFERENCES evaluation_rules(id) ON DELETE CASCADE,
    execution_id      TEXT NOT NULL REFERENCES executions(id) ON DELETE CASCADE,
    status            TEXT NOT NULL DEFAULT 'pending',
    attempts          BIGINT NOT NULL DEFAULT 0,
    next_attempt_at   BIGINT NOT NULL,
    lease_owner       TEXT,
    lease_expires_at  BIGINT,
    score_id          TEXT,
    last_error        TEXT,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    UNIQUE (rule_id, execution_id)
);
CREATE INDEX evaluation_judgments_execution ON evaluation_judgments (execution_id);
-- Only pending rows are in it: what the judges look for.
CREATE INDEX evaluation_judgments_due ON evaluation_judgments (next_attempt_at) WHERE status = 'pending';

-- A score given by a rule names it; a rule scores an execution once.
ALTER TABLE scores ADD COLUMN rule_id TEXT;
CREATE UNIQUE INDEX scores_rule_execution ON scores (rule_id, execution_id) WHERE rule_id IS NOT NULL;

-- +goose Down
DROP INDEX scores_rule_execution;
ALTER TABLE scores DROP COLUMN rule_id;
DROP TABLE evaluation_judgments;
DROP TABLE evaluation_rules;
