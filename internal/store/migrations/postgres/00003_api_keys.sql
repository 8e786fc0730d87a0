-- +goose Up
-- API keys: only the SHA-256 of a key is stored; key_prefix is kept for display.
CREATE TABLE api_keys (
    id               TEXT PRIMARY KEY,
    workspace_id     TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name             TEXT NOT NULL,
    key_prefix       TEXT NOT NULL,
    key_hash         TEXT NOT NULL UNIQUE,
    scopes           TEXT NOT NULL DEFAULT '[]',
    allowed_ips      TEXT NOT NULL DEFAULT '[]',
    allowed_origins  TEXT NOT NULL DEFAULT '[]',
    expires_at       BIGINT,
    last_used_at     BIGINT,
    created_at       BIGINT NOT NULL,
    revoked_at       BIGINT
);
CREATE INDEX api_keys_ws_created ON api_keys (workspace_id, created_at DESC, id DESC);

-- +goose Down
DROP TABLE api_keys;
