-- +goose Up
CREATE TABLE workspaces (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    slug        TEXT NOT NULL UNIQUE,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);

CREATE TABLE llm_models (
    id                        TEXT PRIMARY KEY,
    provider                  TEXT NOT NULL,
    name                      TEXT NOT NULL,
    description               TEXT NOT NULL DEFAULT '',
    context_window            BIGINT NOT NULL,
    max_output_tokens         BIGINT NOT NULL,
    input_price_per_million   DOUBLE PRECISION NOT NULL,
    output_price_per_million  DOUBLE PRECISION NOT NULL,
    capabilities              TEXT NOT NULL DEFAULT '[]',
    created_at                BIGINT NOT NULL
);

CREATE TABLE agents (
    id                 TEXT PRIMARY KEY,
    workspace_id       TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name               TEXT NOT NULL,
    description        TEXT NOT NULL DEFAULT '',
    type               TEXT NOT NULL,
    status             TEXT NOT NULL,
    tags               TEXT NOT NULL DEFAULT '[]',
    metadata           TEXT NOT NULL DEFAULT '{}',
    active_version_id  TEXT,
    version_seq        BIGINT NOT NULL DEFAULT 0,
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL
);
CREATE INDEX agents_ws_created ON agents (workspace_id, created_at DESC, id DESC);

CREATE TABLE agent_versions (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL,
    agent_id      TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    version       BIGINT NOT NULL,
    config        TEXT NOT NULL,
    notes         TEXT NOT NULL DEFAULT '',
    created_at    BIGINT NOT NULL,
    UNIQUE (agent_id, version)
);

CREATE TABLE prompts (
    id                 TEXT PRIMARY KEY,
    workspace_id       TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name               TEXT NOT NULL,
    description        TEXT NOT NULL DEFAULT '',
    tags               TEXT NOT NULL DEFAULT '[]',
    metadata           TEXT NOT NULL DEFAULT '{}',
    active_version_id  TEXT,
    version_seq        BIGINT NOT NULL DEFAULT 0,
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL
);
CREATE INDEX prompts_ws_created ON prompts (workspace_id, created_at DESC, id DESC);

CREATE TABLE prompt_versions (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL,
    prompt_id     TEXT NOT NULL REFERENCES prompts(id) ON DELETE CASCADE,
    version       BIGINT NOT NULL,
    template      TEXT NOT NULL,
    config        TEXT NOT NULL DEFAULT '{}',
    notes         TEXT NOT NULL DEFAULT '',
    created_at    BIGINT NOT NULL,
    UNIQUE (prompt_id, version)
);

CREATE TABLE data_sources (
    id                 TEXT PRIMARY KEY,
    workspace_id       TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name               TEXT NOT NULL,
    type               TEXT NOT NULL,
    description        TEXT NOT NULL DEFAULT '',
    credential_id      TEXT,
    active_version_id  TEXT,
    version_seq        BIGINT NOT NULL DEFAULT 0,
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL
);
CREATE INDEX data_sources_ws_created ON data_sources (workspace_id, created_at DESC, id DESC);

CREATE TABLE data_source_versions (
    id              TEXT PRIMARY KEY,
    workspace_id    TEXT NOT NULL,
    data_source_id  TEXT NOT NULL REFERENCES data_sources(id) ON DELETE CASCADE,
    version         BIGINT NOT NULL,
    config          TEXT NOT NULL,
    notes           TEXT NOT NULL DEFAULT '',
    created_at      BIGINT NOT NULL,
    UNIQUE (data_source_id, version)
);

CREATE TABLE credentials (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    type          TEXT NOT NULL,
    provider      TEXT NOT NULL DEFAULT '',
    description   TEXT NOT NULL DEFAULT '',
    metadata      TEXT NOT NULL DEFAULT '{}',
    secret        TEXT NOT NULL,
    masked_value  TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);
CREATE INDEX credentials_ws_created ON credentials (workspace_id, created_at DESC, id DESC);

CREATE TABLE mcp_tools (
    id             TEXT PRIMARY KEY,
    workspace_id   TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name           TEXT NOT NULL,
    description    TEXT NOT NULL DEFAULT '',
    transport      TEXT NOT NULL,
    url            TEXT NOT NULL DEFAULT '',
    command        TEXT NOT NULL DEFAULT '',
    args           TEXT NOT NULL DEFAULT '[]',
    credential_id  TEXT,
    enabled        BOOLEAN NOT NULL DEFAULT TRUE,
    tools          TEXT NOT NULL DEFAULT '[]',
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
);
CREATE INDEX mcp_tools_ws_created ON mcp_tools (workspace_id, created_at DESC, id DESC);

CREATE TABLE guardrails (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    description   TEXT NOT NULL DEFAULT '',
    applies_to    TEXT NOT NULL,
    action        TEXT NOT NULL,
    enabled       BOOLEAN NOT NULL DEFAULT TRUE,
    scanners      TEXT NOT NULL DEFAULT '[]',
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);
CREATE INDEX guardrails_ws_created ON guardrails (workspace_id, created_at DESC, id DESC);

CREATE TABLE memories (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    agent_id      TEXT REFERENCES agents(id) ON DELETE CASCADE,
    key           TEXT NOT NULL DEFAULT '',
    content       TEXT NOT NULL,
    metadata      TEXT NOT NULL DEFAULT '{}',
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);
CREATE INDEX memories_ws_created ON memories (workspace_id, created_at DESC, id DESC);

CREATE TABLE idempotency_keys (
    workspace_id  TEXT NOT NULL,
    key           TEXT NOT NULL,
    request_hash  TEXT NOT NULL,
    status        BIGINT NOT NULL DEFAULT 0,
    response      TEXT NOT NULL DEFAULT '',
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, key)
);

-- +goose Down
DROP TABLE idempotency_keys;
DROP TABLE memories;
DROP TABLE guardrails;
DROP TABLE mcp_tools;
DROP TABLE credentials;
DROP TABLE data_source_versions;
DROP TABLE data_sources;
DROP TABLE prompt_versions;
DROP TABLE prompts;
DROP TABLE agent_versions;
DROP TABLE agents;
DROP TABLE llm_models;
DROP TABLE workspaces;
