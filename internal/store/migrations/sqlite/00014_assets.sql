-- +goose Up
-- Asset blobs are the bytes of a workspace's assets, one row per distinct SHA-256: assets
-- with the same bytes share one blob, removed with the last asset that uses it. The bytes
-- themselves are in the blob store (internal/blob); size counts towards the asset quota.
CREATE TABLE asset_blobs (
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    sha256        TEXT NOT NULL,
    size          INTEGER NOT NULL,
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, sha256)
);

-- Assets are media a run produced (or a caller uploaded). execution_id is not a foreign key:
-- an asset outlives nothing it names, and is deleted only through the API.
CREATE TABLE assets (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    execution_id  TEXT,
    type          TEXT NOT NULL,
    mime_type     TEXT NOT NULL,
    size          INTEGER NOT NULL,
    sha256        TEXT NOT NULL,
    name          TEXT NOT NULL DEFAULT '',
    source        TEXT NOT NULL,
    metadata      TEXT NOT NULL DEFAULT '{}',
    created_at    INTEGER NOT NULL,
    FOREIGN KEY (workspace_id, sha256) REFERENCES asset_blobs (workspace_id, sha256)
);
CREATE INDEX assets_ws_created ON assets (workspace_id, created_at DESC, id DESC);
CREATE INDEX assets_execution ON assets (workspace_id, execution_id, created_at DESC, id DESC) WHERE execution_id IS NOT NULL;
CREATE INDEX assets_blob ON assets (workspace_id, sha256);

-- +goose Down
DROP TABLE assets;
DROP TABLE asset_blobs;
