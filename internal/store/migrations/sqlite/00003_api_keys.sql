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
    expires_at       INTEGER,
    last_used_at     INTEGER,
    created_at       INTEGER NOT NULL,
    revoked_at       INTEGER
);
CREATE INDEX api_keys_ws_created ON api_keys (workspace_id, created_at DESC, id DESC);

-- +goose Down
DROP TABLE api_keys;
