-- +goose Up
-- The bytes of asset blobs kept in the database: serve's blob store on PostgreSQL
-- (internal/blob.Database), so that every node of a cluster serves every asset without a
-- shared directory. One row per workspace and SHA-256, written before the asset_blobs record
-- that counts it (hence no foreign key to it) and deleted after that record's last asset.
CREATE TABLE blob_data (
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    sha256        TEXT NOT NULL,
    size          BIGINT NOT NULL,
    data          BLOB NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, sha256)
);

-- +goose Down
DROP TABLE blob_data;
