-- +goose Up
-- Agent triggers start executions from inbound calls (a generic webhook, Slack, Telegram,
-- Teams, WhatsApp) or on a schedule. The hook token is stored only as its SHA-256; the
-- secrets of a trigger's config (and its completion webhook secret) are sealed in secrets,
-- and config holds their masked form.
CREATE TABLE agent_triggers (
    id              TEXT PRIMARY KEY,
    workspace_id    TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    agent_id        TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    version_id      TEXT REFERENCES agent_versions(id) ON DELETE SET NULL,
    type            TEXT NOT NULL,
    name            TEXT NOT NULL,
    enabled         BOOLEAN NOT NULL DEFAULT TRUE,
    config          TEXT NOT NULL DEFAULT '{}',
    secrets         TEXT NOT NULL DEFAULT '',
    input_mapping   TEXT NOT NULL DEFAULT '{}',
    input           TEXT,
    webhook_url     TEXT NOT NULL DEFAULT '',
    token_hash      TEXT UNIQUE,
    token_prefix    TEXT NOT NULL DEFAULT '',
    next_run_at     BIGINT,
    last_run_at     BIGINT,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE INDEX agent_triggers_ws_created ON agent_triggers (workspace_id, created_at DESC, id DESC);
CREATE INDEX agent_triggers_agent ON agent_triggers (agent_id);
-- The scheduler's look for due ticks.
CREATE INDEX agent_triggers_due ON agent_triggers (next_run_at) WHERE next_run_at IS NOT NULL;

-- One row per inbound event handled (a platform's event id, a webhook-id): a retry of the
-- same event within 24 h finds it and runs nothing.
CREATE TABLE trigger_events (
    trigger_id    TEXT NOT NULL REFERENCES agent_triggers(id) ON DELETE CASCADE,
    dedup_key     TEXT NOT NULL,
    execution_id  TEXT,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (trigger_id, dedup_key)
);
CREATE INDEX trigger_events_created ON trigger_events (created_at);

-- The chat session each conversation of a chat trigger continues (a Slack thread, a
-- Telegram chat, a WhatsApp sender, a Teams conversation).
CREATE TABLE trigger_sessions (
    trigger_id        TEXT NOT NULL REFERENCES agent_triggers(id) ON DELETE CASCADE,
    conversation_key  TEXT NOT NULL,
    session_id        TEXT NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
    created_at        BIGINT NOT NULL,
    PRIMARY KEY (trigger_id, conversation_key)
);
CREATE INDEX trigger_sessions_session ON trigger_sessions (session_id);

-- The reply each chat platform message is owed, written with its execution: whichever node
-- sees the run stop (the one running it, or any node's sweeper after a crash) claims the row
-- and sends the reply once.
CREATE TABLE trigger_replies (
    execution_id  TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL,
    trigger_id    TEXT NOT NULL REFERENCES agent_triggers(id) ON DELETE CASCADE,
    reply_to      TEXT NOT NULL DEFAULT '{}',
    status        TEXT NOT NULL DEFAULT 'pending',
    attempts      INTEGER NOT NULL DEFAULT 0,
    locked_until  BIGINT,
    last_error    TEXT NOT NULL DEFAULT '',
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);
CREATE INDEX trigger_replies_pending ON trigger_replies (created_at) WHERE status = 'pending';

-- +goose Down
DROP TABLE trigger_replies;
DROP TABLE trigger_sessions;
DROP TABLE trigger_events;
DROP TABLE agent_triggers;
