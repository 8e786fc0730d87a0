-- +goose Up
-- Memories can belong to a chat session or an end user, and are searched by full text (FTS5,
-- with Porter stemming) when a run puts the relevant ones into its prompt.
ALTER TABLE memories ADD COLUMN session_id TEXT;
ALTER TABLE memories ADD COLUMN end_user_id TEXT;
CREATE INDEX memories_session ON memories (workspace_id, session_id) WHERE session_id IS NOT NULL;
CREATE INDEX memories_end_user ON memories (workspace_id, end_user_id) WHERE end_user_id IS NOT NULL;

CREATE VIRTUAL TABLE memories_fts USING fts5(key, content, content='memories', content_rowid='rowid', tokenize='porter unicode61');
INSERT INTO memories_fts (rowid, key, content) SELECT rowid, key, content FROM memories;

-- +goose StatementBegin
CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, key, content) VALUES (new.rowid, new.key, new.content);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, key, content) VALUES ('delete', old.rowid, old.key, old.content);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER memories_fts_update AFTER UPDATE OF key, content ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, key, content) VALUES ('delete', old.rowid, old.key, old.content);
    INSERT INTO memories_fts (rowid, key, content) VALUES (new.rowid, new.key, new.content);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER memories_fts_update;
DROP TRIGGER memories_fts_delete;
DROP TRIGGER memories_fts_insert;
DROP TABLE memories_fts;
DROP INDEX memories_end_user;
DROP INDEX memories_session;
ALTER TABLE memories DROP COLUMN end_user_id;
ALTER TABLE memories DROP COLUMN session_id;
